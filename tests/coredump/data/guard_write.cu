// A store one element past the end of a buffer placed flush against unmapped address
// space (as the fence does: cuMemAddressReserve for two granules, only the first mapped,
// the buffer ending at the granule's end). 1,001 threads write elements 0..1000 of a
// 1,000-float buffer (the loop bound is <= n): thread 232 of block 3 stores past the end,
// into the unmapped granule. A store faults after its warp issued it, so the dump is
// expected to name the fault on the SM (exception and error PC) with no warp left.
// `guard_write SECONDS` stays alive that long after the synchronize returned (whether a
// dump still being written survives the process's exit: scripts/device/store-dump-probe.sh).
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#define CHECK_DRV(call)                                                    \
  do {                                                                     \
    CUresult r_ = (call);                                                  \
    if (r_ != CUDA_SUCCESS) {                                              \
      const char* s_ = nullptr;                                            \
      cuGetErrorName(r_, &s_);                                             \
      std::printf("%s failed: %s\n", #call, s_ ? s_ : "?");                \
      std::exit(2);                                                        \
    }                                                                      \
  } while (0)

__global__ void fill_inclusive(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = static_cast<float>(i);  // the bug: i == n is one past the end
}

int main(int argc, char** argv) {
  CHECK_DRV(cuInit(0));
  cudaFree(nullptr);  // the runtime's primary context, current on this thread
  CUdevice dev = 0;
  CHECK_DRV(cuCtxGetDevice(&dev));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  size_t granule = 0;
  CHECK_DRV(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUdeviceptr base = 0;
  CHECK_DRV(cuMemAddressReserve(&base, 2 * granule, 0, 0, 0));
  CUmemGenericAllocationHandle h = 0;
  CHECK_DRV(cuMemCreate(&h, granule, &prop, 0));
  CHECK_DRV(cuMemMap(base, granule, 0, h, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_DRV(cuMemSetAccess(base, granule, &access, 1));
  const int n = 1000;
  float* out = reinterpret_cast<float*>(base + granule - n * sizeof(float));
  std::printf("buffer=%p end=%p granule=%zu\n", static_cast<void*>(out), static_cast<void*>(out + n), granule);
  fill_inclusive<<<(n + 1 + 255) / 256, 256>>>(out, n);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  std::fflush(stdout);
  if (argc > 1) sleep(static_cast<unsigned>(std::atoi(argv[1])));
  return e == cudaSuccess ? 0 : 1;
}

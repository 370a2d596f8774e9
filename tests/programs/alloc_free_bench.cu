// What the fence costs per operation (scripts/device/fence-bench.sh runs it natively, with
// CUDA_LAUNCH_BLOCKING=1, and under the interposer):
//
//   alloc_free_bench cycles N      N buffer lives of mixed sizes (16 live at a time, as a
//                                  training loop without a caching allocator has them):
//                                  cudaMalloc, a launch that stamps the buffer, cudaFree
//   alloc_free_bench launches N    N launches of a tiny kernel with two pointer arguments
//   alloc_free_bench vmm N         the driver's VMM calls one by one, N times each (a
//                                  fenced buffer's life, without the interposer)
//
// Every mode checks its results (the stamps come back summed on the device and are
// compared with the host's sum) and prints one line of "key=value" fields, times in
// microseconds per operation.
#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_check.h"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// Writes `stamp` into the first and the last word of the buffer and adds the last word,
// read back, to the sum: the sum is right only if the whole buffer was usable.
__global__ void stamp_buffer(unsigned* words, std::size_t n, unsigned stamp, unsigned long long* sum) {
  if (threadIdx.x == 0) words[0] = stamp;
  if (threadIdx.x == 1) {
    volatile unsigned* last = words + n - 1;
    *last = stamp ^ 0x5bd1e995u;
    atomicAdd(sum, static_cast<unsigned long long>(*last));
  }
}

__global__ void add_one(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1;
}

unsigned long long read_sum(const unsigned long long* device_sum) {
  unsigned long long sum = 0;
  PROBE_CHECK(cudaMemcpy(&sum, device_sum, sizeof sum, cudaMemcpyDeviceToHost));
  return sum;
}

int cycles(int n) {
  // Sizes a small transformer's tensors have (bytes), none a multiple of 2 MiB.
  const std::size_t sizes[] = {512, 1536, 2048, 4160, 32768, 65536, 131072, 196608, 262144, 1u << 20, (4u << 20) + 256};
  constexpr int kLive = 16;
  std::mt19937 rng(4321);
  unsigned long long* device_sum = nullptr;
  PROBE_CHECK(cudaMalloc(&device_sum, sizeof *device_sum));
  PROBE_CHECK(cudaMemset(device_sum, 0, sizeof *device_sum));
  unsigned* live[kLive] = {};
  unsigned long long expected = 0;
  double alloc_us = 0, launch_us = 0, free_us = 0;
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    unsigned*& slot = live[i % kLive];
    if (slot) {
      const auto t = Clock::now();
      PROBE_CHECK(cudaFree(slot));
      free_us += us_since(t);
    }
    const std::size_t bytes = sizes[rng() % (sizeof sizes / sizeof sizes[0])];
    auto t = Clock::now();
    PROBE_CHECK(cudaMalloc(&slot, bytes));
    alloc_us += us_since(t);
    const unsigned stamp = static_cast<unsigned>(rng());
    t = Clock::now();
    stamp_buffer<<<1, 32>>>(slot, bytes / sizeof(unsigned), stamp, device_sum);
    PROBE_CHECK_LAUNCH();
    launch_us += us_since(t);
    expected += stamp ^ 0x5bd1e995u;
  }
  for (unsigned* p : live) {
    if (!p) continue;
    const auto t = Clock::now();
    PROBE_CHECK(cudaFree(p));
    free_us += us_since(t);
  }
  PROBE_CHECK(cudaDeviceSynchronize());
  const double total_us = us_since(start);
  const unsigned long long sum = read_sum(device_sum);
  PROBE_CHECK(cudaFree(device_sum));
  std::printf("mode=cycles n=%d us_per_cycle=%.2f us_alloc=%.2f us_launch=%.2f us_free=%.2f check=%s\n", n,
              total_us / n, alloc_us / n, launch_us / n, free_us / n, sum == expected ? "ok" : "WRONG");
  return sum == expected ? 0 : 2;
}

int launches(int n) {
  constexpr int kElements = 1000;
  std::vector<int> host(kElements);
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> dist(-1000000, 1000000);
  for (int& v : host) v = dist(rng);
  int *a = nullptr, *b = nullptr;
  PROBE_CHECK(cudaMalloc(&a, kElements * sizeof(int)));
  PROBE_CHECK(cudaMalloc(&b, kElements * sizeof(int)));
  PROBE_CHECK(cudaMemcpy(a, host.data(), kElements * sizeof(int), cudaMemcpyHostToDevice));
  PROBE_CHECK(cudaMemset(b, 0xa5, kElements * sizeof(int)));  // poisoned until written
  // Warm up (module loading, the interposer's first look at the kernel): b = a + 1, a
  // left as it is.
  add_one<<<(kElements + 255) / 256, 256>>>(a, b, kElements);
  PROBE_CHECK_LAUNCH();
  PROBE_CHECK(cudaDeviceSynchronize());
  const auto start = Clock::now();
  // Launch i writes a0 + i + 1 into b (i even) or a (i odd): the result depends on every one.
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      add_one<<<(kElements + 255) / 256, 256>>>(a, b, kElements);
    } else {
      add_one<<<(kElements + 255) / 256, 256>>>(b, a, kElements);
    }
    PROBE_CHECK_LAUNCH();
  }
  PROBE_CHECK(cudaDeviceSynchronize());
  const double total_us = us_since(start);
  std::vector<int> out(kElements);
  PROBE_CHECK(cudaMemcpy(out.data(), n % 2 == 1 ? b : a, kElements * sizeof(int), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int j = 0; j < kElements; ++j) ok = ok && out[j] == host[j] + n;
  PROBE_CHECK(cudaFree(a));
  PROBE_CHECK(cudaFree(b));
  std::printf("mode=launches n=%d us_per_launch=%.3f check=%s\n", n, total_us / n, ok ? "ok" : "WRONG");
  return ok ? 0 : 2;
}

#define DRIVER_CHECK(call)                                                                  \
  do {                                                                                      \
    const CUresult driver_error = (call);                                                   \
    if (driver_error != CUDA_SUCCESS) {                                                     \
      const char* name = nullptr;                                                           \
      cuGetErrorName(driver_error, &name);                                                  \
      std::printf("CUDA driver error %d (%s) at %s\n", static_cast<int>(driver_error),      \
                  name ? name : "?", #call);                                                \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// One fenced buffer's life in driver calls, each timed on its own: what the interposer's
// allocation and free paths are made of.
int vmm(int n) {
  PROBE_CHECK(cudaFree(nullptr));  // the primary context, current
  CUdevice device = 0;
  DRIVER_CHECK(cuCtxGetDevice(&device));
  int rdma = 0;
  DRIVER_CHECK(cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, device));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  std::size_t gran = 0;
  DRIVER_CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  unsigned long long* device_sum = nullptr;
  PROBE_CHECK(cudaMalloc(&device_sum, sizeof *device_sum));
  PROBE_CHECK(cudaMemset(device_sum, 0, sizeof *device_sum));

  enum { kReserve, kCreateRdma, kCreatePlain, kMap, kSetAccess, kSync, kUnmap, kRelease, kAddressFree, kCount };
  const char* names[kCount] = {"cuMemAddressReserve", "cuMemCreate_rdma", "cuMemCreate", "cuMemMap", "cuMemSetAccess",
                               "cuCtxSynchronize",    "cuMemUnmap",       "cuMemRelease", "cuMemAddressFree"};
  double us[kCount] = {};
  int counted[kCount] = {};
  unsigned long long expected = 0;
  for (int i = 0; i < n; ++i) {
    CUdeviceptr base = 0;
    auto t = Clock::now();
    DRIVER_CHECK(cuMemAddressReserve(&base, 2 * gran, 0, 0, 0));
    us[kReserve] += us_since(t), ++counted[kReserve];
    // Alternate RDMA-capable and plain memory (cudaMalloc memory is RDMA-capable).
    const bool with_rdma = rdma && i % 2 == 0;
    prop.allocFlags.gpuDirectRDMACapable = with_rdma ? 1 : 0;
    CUmemGenericAllocationHandle h = 0;
    t = Clock::now();
    DRIVER_CHECK(cuMemCreate(&h, gran, &prop, 0));
    const int create = with_rdma ? kCreateRdma : kCreatePlain;
    us[create] += us_since(t), ++counted[create];
    t = Clock::now();
    DRIVER_CHECK(cuMemMap(base, gran, 0, h, 0));
    us[kMap] += us_since(t), ++counted[kMap];
    t = Clock::now();
    DRIVER_CHECK(cuMemSetAccess(base, gran, &access, 1));
    us[kSetAccess] += us_since(t), ++counted[kSetAccess];
    const unsigned stamp = 0x1000u + static_cast<unsigned>(i);
    stamp_buffer<<<1, 32>>>(reinterpret_cast<unsigned*>(base), gran / sizeof(unsigned), stamp, device_sum);
    PROBE_CHECK_LAUNCH();
    expected += stamp ^ 0x5bd1e995u;
    t = Clock::now();
    DRIVER_CHECK(cuCtxSynchronize());
    us[kSync] += us_since(t), ++counted[kSync];
    t = Clock::now();
    DRIVER_CHECK(cuMemUnmap(base, gran));
    us[kUnmap] += us_since(t), ++counted[kUnmap];
    t = Clock::now();
    DRIVER_CHECK(cuMemRelease(h));
    us[kRelease] += us_since(t), ++counted[kRelease];
    t = Clock::now();
    DRIVER_CHECK(cuMemAddressFree(base, 2 * gran));
    us[kAddressFree] += us_since(t), ++counted[kAddressFree];
  }
  const unsigned long long sum = read_sum(device_sum);
  PROBE_CHECK(cudaFree(device_sum));
  std::printf("mode=vmm n=%d granularity=%zu rdma_supported=%d", n, gran, rdma);
  for (int c = 0; c < kCount; ++c)
    if (counted[c]) std::printf(" us_%s=%.2f", names[c], us[c] / counted[c]);
  std::printf(" check=%s\n", sum == expected ? "ok" : "WRONG");
  return sum == expected ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::printf("usage: alloc_free_bench cycles|launches|vmm N\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  if (n <= 0) {
    std::printf("alloc_free_bench: N must be a positive number, got '%s'\n", argv[2]);
    return 2;
  }
  if (std::strcmp(argv[1], "cycles") == 0) return cycles(n);
  if (std::strcmp(argv[1], "launches") == 0) return launches(n);
  if (std::strcmp(argv[1], "vmm") == 0) return vmm(n);
  std::printf("alloc_free_bench: unknown mode '%s' (cycles, launches, vmm)\n", argv[1]);
  return 2;
}

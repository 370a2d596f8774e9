// One block of 64 threads writes 1 GiB past the end of a 4 KiB buffer: thread t writes
// element (1 GiB / 4) + t, so every lane faults at a known address.
#include <cstdio>
__global__ void far_write(float* out, long long offset) {
  const int t = threadIdx.x;
  out[offset + t] = static_cast<float>(t);
}
int main() {
  float* p = nullptr;
  cudaMalloc(&p, 4096);
  std::printf("buffer=%p\n", static_cast<void*>(p));
  far_write<<<1, 64>>>(p, (1ll << 30) / 4);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}

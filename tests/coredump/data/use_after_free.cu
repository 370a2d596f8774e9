// Reads a buffer after cudaFree (64 threads of one block).
#include <cstdio>
__global__ void touch(float* p, int stride) {
  const int i = threadIdx.x * stride;
  p[i] += 1.0f;
}
int main() {
  float* p = nullptr;
  cudaMalloc(&p, 64 << 20);
  std::printf("freed=%p\n", static_cast<void*>(p));
  cudaFree(p);
  touch<<<1, 64>>>(p, 34);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}

// A device assert on one lane.
#include <cassert>
#include <cstdio>
__global__ void check_positive(const int* v) {
  const int x = v[threadIdx.x];
  assert(x >= 0);
}
int main() {
  int* v = nullptr;
  cudaMalloc(&v, 32 * sizeof(int));
  int h[32];
  for (int i = 0; i < 32; ++i) h[i] = i == 17 ? -1 : i;
  cudaMemcpy(v, h, sizeof h, cudaMemcpyHostToDevice);
  check_positive<<<1, 32>>>(v);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}

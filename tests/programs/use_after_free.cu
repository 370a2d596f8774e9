// Writes into a buffer after cudaFree.
#include "cuda_check.h"

__global__ void fill(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
}

int main() {
  const int n = 1000;
  float* stale = nullptr;
  PROBE_CHECK(cudaMalloc(&stale, n * sizeof(float)));
  PROBE_CHECK(cudaFree(stale));
  fill<<<(n + 255) / 256, 256>>>(stale, n);  // the bug: the buffer is gone
  PROBE_CHECK_LAUNCH();
  PROBE_CHECK(cudaDeviceSynchronize());
  std::printf("finished: the write after free went unnoticed\n");
  return 0;
}

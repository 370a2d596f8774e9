// Writes one element past the end of a cudaMalloc'ed buffer (the loop bound is <= n).
// Built twice by scripts/device/interposer-probe.sh: -cudart static (nvcc's default,
// which never calls an exported cudaMalloc) and -cudart shared.
#include "cuda_check.h"

__global__ void fill_inclusive(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = static_cast<float>(i);  // the bug: i == n is one past the end
}

int main() {
  const int n = 1000;  // 4,000 bytes
  float* out = nullptr;
  PROBE_CHECK(cudaMalloc(&out, n * sizeof(float)));
  fill_inclusive<<<(n + 1 + 255) / 256, 256>>>(out, n);
  PROBE_CHECK_LAUNCH();
  PROBE_CHECK(cudaDeviceSynchronize());
  float last = 0;
  PROBE_CHECK(cudaMemcpy(&last, out + n - 1, sizeof last, cudaMemcpyDeviceToHost));
  PROBE_CHECK(cudaFree(out));
  std::printf("finished: out[%d] = %g (the write past the end went unnoticed)\n", n - 1, last);
  return 0;
}

// Memory bugs that a guard after each buffer does not catch, one per mode, for
// scripts/gpu-check.d/60-run.sh:
//   coverage_bugs underrun   a kernel writes out[-1] of a 1,000-float cudaMalloc buffer
//                            (only a guard before the start, the fence-front rung, sees it)
//   coverage_bugs slack      a kernel writes one fp16 element past a 1,001-element buffer
//                            (2,002 bytes: at 16-byte alignment the write lands in the 14
//                            bytes of slack before the guard; the canaries see it at free)
//   coverage_bugs managed    a kernel writes one float past a 1,000-float cudaMallocManaged
//                            buffer (never fenced: memcheck must look)
//   coverage_bugs hang       a kernel spins on a flag nobody sets (a GPU hang)
#include <cuda_fp16.h>

#include <cstring>

#include "cuda_check.h"

__global__ void fill_from_minus_one(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x - 1;  // the bug: starts at -1
  if (i < n) out[i] = 1.0f;
}

__global__ void fill_half_inclusive(__half* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = __float2half(2.0f);  // the bug: i == n is one past the end
}

__global__ void fill_inclusive(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 3.0f;
}

__global__ void wait_for(volatile int* flag) {
  while (*flag == 0) {
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "underrun") == 0) {
    const int n = 1000;
    float* out = nullptr;
    PROBE_CHECK(cudaMalloc(&out, n * sizeof(float)));
    fill_from_minus_one<<<(n + 1 + 255) / 256, 256>>>(out, n);
    PROBE_CHECK_LAUNCH();
    PROBE_CHECK(cudaDeviceSynchronize());
    PROBE_CHECK(cudaFree(out));
  } else if (std::strcmp(mode, "slack") == 0) {
    const int n = 1001;  // 2,002 bytes
    __half* out = nullptr;
    PROBE_CHECK(cudaMalloc(&out, n * sizeof(__half)));
    fill_half_inclusive<<<(n + 1 + 255) / 256, 256>>>(out, n);
    PROBE_CHECK_LAUNCH();
    PROBE_CHECK(cudaDeviceSynchronize());
    PROBE_CHECK(cudaFree(out));
  } else if (std::strcmp(mode, "managed") == 0) {
    const int n = 1000;
    float* out = nullptr;
    PROBE_CHECK(cudaMallocManaged(&out, n * sizeof(float)));
    fill_inclusive<<<(n + 1 + 255) / 256, 256>>>(out, n);
    PROBE_CHECK_LAUNCH();
    PROBE_CHECK(cudaDeviceSynchronize());
    PROBE_CHECK(cudaFree(out));
  } else if (std::strcmp(mode, "hang") == 0) {
    int* flag = nullptr;
    PROBE_CHECK(cudaMalloc(&flag, sizeof(int)));
    PROBE_CHECK(cudaMemset(flag, 0, sizeof(int)));
    wait_for<<<1, 1>>>(flag);
    PROBE_CHECK_LAUNCH();
    PROBE_CHECK(cudaDeviceSynchronize());
  } else {
    std::printf("usage: coverage_bugs underrun|slack|managed|hang\n");
    return 2;
  }
  std::printf("finished: %s (the bug went unnoticed)\n", mode);
  return 0;
}

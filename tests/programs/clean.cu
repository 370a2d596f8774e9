// A correct program: y = a * x + y on fresh random data, checked against the host, on
// several buffer sizes (none a multiple of 256 bytes), with a stream-ordered allocation.
// It must finish with the same checksum with and without the interposer.
#include <cmath>
#include <random>
#include <vector>

#include "cuda_check.h"

__global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  double checksum = 0;
  for (int n : {1, 15, 1000, 4097, 1 << 20}) {
    std::vector<float> x(n), y(n), result(n);
    for (int i = 0; i < n; ++i) {
      x[i] = dist(rng);
      y[i] = dist(rng);
    }
    float *dx = nullptr, *dy = nullptr;
    PROBE_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    PROBE_CHECK(cudaMallocAsync(&dy, n * sizeof(float), 0));
    PROBE_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    PROBE_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    saxpy<<<(n + 255) / 256, 256>>>(2.0f, dx, dy, n);
    PROBE_CHECK_LAUNCH();
    PROBE_CHECK(cudaMemcpy(result.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
      const float expected = 2.0f * x[i] + y[i];
      if (std::fabs(result[i] - expected) > 1e-6f) {
        std::printf("wrong result at n=%d i=%d: %g, expected %g\n", n, i, result[i], expected);
        return 2;
      }
      checksum += result[i];
    }
    PROBE_CHECK(cudaFree(dx));
    PROBE_CHECK(cudaFreeAsync(dy, 0));
  }
  PROBE_CHECK(cudaDeviceSynchronize());
  std::printf("finished: checksum=%.6f\n", checksum);
  return 0;
}

// A device-side assert that fails in one thread (error 710).
#include <cassert>

#include "cuda_check.h"

__global__ void check_positive(const int* values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(values[i] > 0);
}

int main() {
  const int n = 256;
  int host[n];
  for (int i = 0; i < n; ++i) host[i] = i == 77 ? -1 : i + 1;  // one bad value
  int* values = nullptr;
  PROBE_CHECK(cudaMalloc(&values, sizeof host));
  PROBE_CHECK(cudaMemcpy(values, host, sizeof host, cudaMemcpyHostToDevice));
  check_positive<<<1, n>>>(values, n);
  PROBE_CHECK_LAUNCH();
  PROBE_CHECK(cudaDeviceSynchronize());
  std::printf("finished: the assert did not fire\n");
  return 0;
}

// A 16-byte vector load from an address 4 bytes past a 16-byte boundary (error 716).
#include "cuda_check.h"

__global__ void load_vector(const float* in, float* out) {
  const float4 v = *reinterpret_cast<const float4*>(in + 1);  // the bug: in + 1 is not 16-byte aligned
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

int main() {
  float *in = nullptr, *out = nullptr;
  PROBE_CHECK(cudaMalloc(&in, 64 * sizeof(float)));
  PROBE_CHECK(cudaMalloc(&out, 32 * sizeof(float)));
  PROBE_CHECK(cudaMemset(in, 0, 64 * sizeof(float)));
  load_vector<<<1, 32>>>(in, out);
  PROBE_CHECK_LAUNCH();
  PROBE_CHECK(cudaDeviceSynchronize());
  std::printf("finished: the misaligned load went unnoticed\n");
  return 0;
}

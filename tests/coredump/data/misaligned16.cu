// A 16-byte vector load from 4 bytes past a 16-byte boundary (seed 002's pattern).
#include <cstdio>
__global__ void load_vector(const float* in, float* out) {
  const float4 v = *reinterpret_cast<const float4*>(in + 1 + 4 * threadIdx.x);
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
int main() {
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, 1024 * sizeof(float));
  cudaMalloc(&out, 32 * sizeof(float));
  std::printf("in=%p\n", static_cast<void*>(in));
  load_vector<<<1, 32>>>(in, out);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}

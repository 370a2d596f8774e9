// The kernel of torch_custom_op.py: fills out[0..n] (one element too many). Built into a
// shared library; the host function takes the tensor's data pointer and torch's stream.
#include <cuda_runtime.h>

__global__ void fill_inclusive(float* out, long n) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i <= n) out[i] = 2.0f;  // the bug: i == n is one past the end
}

extern "C" int write_past_end(float* out, long n, cudaStream_t stream) {
  fill_inclusive<<<static_cast<unsigned>((n + 1 + 255) / 256), 256, 0, stream>>>(out, n);
  return static_cast<int>(cudaGetLastError());
}

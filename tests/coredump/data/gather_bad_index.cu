// A row gather whose index table holds one bad row (seed 000's pattern): the load's
// destination register may overwrite half of its own address pair.
#include <cstdio>
__global__ void gather_rows(const float* src, const long long* idx, float* out, int cols) {
  const int row = blockIdx.x, col = threadIdx.x;
  out[row * cols + col] = src[idx[row] * cols + col];
}
int main() {
  const int rows = 4, cols = 32;
  float *src = nullptr, *out = nullptr;
  long long* idx = nullptr;
  cudaMalloc(&src, 1024 * cols * sizeof(float));
  cudaMalloc(&out, rows * cols * sizeof(float));
  cudaMalloc(&idx, rows * sizeof(long long));
  long long h[rows] = {0, 5, 200000000, 7};  // row 2 is 24 GiB past the source
  cudaMemcpy(idx, h, sizeof h, cudaMemcpyHostToDevice);
  std::printf("src=%p\n", static_cast<void*>(src));
  gather_rows<<<rows, cols>>>(src, idx, out, cols);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}

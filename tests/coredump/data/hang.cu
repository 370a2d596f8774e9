// One warp spins on a flag nobody sets: dumped through the user-trigger pipe.
#include <cstdio>
__global__ void wait_flag(volatile int* flag) {
  while (*flag == 0) {
  }
}
int main() {
  int* f = nullptr;
  cudaMalloc(&f, sizeof(int));
  cudaMemset(f, 0, sizeof(int));
  wait_flag<<<1, 32>>>(f);
  std::printf("launched\n");
  std::fflush(stdout);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return 1;
}

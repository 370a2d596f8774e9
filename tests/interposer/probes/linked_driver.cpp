// A program linked against libcuda itself (-lcuda), calling cuMemAlloc directly: the
// interposer's exported cuMemAlloc_v2 must stand in for the driver's.
//
//   linked_driver clean     allocates, writes in bounds, frees
//   linked_driver overrun   writes one byte past a 4,000-byte buffer
#include <cuda.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  const bool overrun = argc > 1 && std::strcmp(argv[1], "overrun") == 0;
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdeviceptr p = 0;
  if (cuMemAlloc(&p, 4000) != CUDA_SUCCESS) return 1;
  auto* bytes = reinterpret_cast<volatile unsigned char*>(p);
  bytes[3999] = 1;
  if (overrun) bytes[4000] = 1;
  if (cuMemFree(p) != CUDA_SUCCESS) return 1;
  std::printf("%s: no fault\n", overrun ? "overrun" : "clean");
  return 0;
}

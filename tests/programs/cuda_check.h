#pragma once
// Error reporting of the small device programs in tests/programs: every CUDA call and
// every launch checked, the error printed in one line ("CUDA error 700
// (cudaErrorIllegalAddress) at cudaDeviceSynchronize(): an illegal memory access was
// encountered") and the program exits 1.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define PROBE_CHECK(call)                                                                          \
  do {                                                                                             \
    const cudaError_t probe_error = (call);                                                        \
    if (probe_error != cudaSuccess) {                                                              \
      std::printf("CUDA error %d (%s) at %s: %s\n", static_cast<int>(probe_error),                 \
                  cudaGetErrorName(probe_error), #call, cudaGetErrorString(probe_error));          \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

#define PROBE_CHECK_LAUNCH() PROBE_CHECK(cudaGetLastError())

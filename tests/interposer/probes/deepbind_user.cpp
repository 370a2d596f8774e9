// A library that uses the driver itself and is loaded with RTLD_DEEPBIND: its dlopen and
// dlsym bind to glibc's inside its own dependencies, past a preloaded interposer, so the
// buffer it allocates is not fenced and its one-byte overrun goes unnoticed.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>

extern "C" __attribute__((visibility("default"))) int deepbind_overrun() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return 1;
  auto gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  if (!gpa) return 1;
  void* init = nullptr;
  void* alloc = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (gpa("cuInit", &init, 12000, 0, &status) != CUDA_SUCCESS ||
      gpa("cuMemAlloc", &alloc, 12000, 0, &status) != CUDA_SUCCESS)
    return 1;
  reinterpret_cast<PFN_cuInit_v2000>(init)(0);
  CUdeviceptr p = 0;
  if (reinterpret_cast<PFN_cuMemAlloc_v3020>(alloc)(&p, 4000) != CUDA_SUCCESS) return 1;
  reinterpret_cast<volatile unsigned char*>(p)[4000] = 1;
  std::printf("deepbind: no fault\n");
  return 0;
}

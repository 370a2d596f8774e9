#pragma once
// What the driver probes share: the driver's entry points through cuGetProcAddress (as
// cudart reaches them, so that the interposer's answer is what a program gets), and the
// fake driver's fill_bytes "kernel" launched on a range. Header-only: each probe is its
// own executable.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

namespace probe {

// The cuGetProcAddress that cuGetProcAddress itself returned (main sets it).
inline PFN_cuGetProcAddress_v12000 g_gpa = nullptr;

// Loads libcuda.so.1 and sets g_gpa: from here on, like cudart, through the
// cuGetProcAddress that cuGetProcAddress returns. On failure `what` names the step and the
// result is its error code (0 where the step has none); true on success.
inline bool open_driver(const char*& what, int& rc) {
  rc = 0;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return what = "dlopen libcuda.so.1", false;
  auto first = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  if (!first) return what = "dlsym cuGetProcAddress_v2", false;
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  if ((rc = first("cuGetProcAddress", &p, 12000, 0, &status)) != 0) return what = "cuGetProcAddress", false;
  g_gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(p);
  return true;
}

template <class Fn>
Fn get(const char* symbol, cuuint64_t flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM, int version = 12000) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (!g_gpa || g_gpa(symbol, &p, version, flags, &status) != CUDA_SUCCESS) return nullptr;
  return reinterpret_cast<Fn>(p);
}

// The fake driver's fill_bytes(p, n, value): any module, one block of 32 threads.
template <class Api>
CUfunction fill_bytes(const Api& api) {
  CUmodule m = nullptr;
  CUfunction f = nullptr;
  if (api.load(&m, "") != CUDA_SUCCESS || api.function(&f, m, "fill_bytes") != CUDA_SUCCESS) return nullptr;
  return f;
}

template <class Api>
CUresult fill(const Api& api, CUfunction f, CUdeviceptr p, unsigned long n, int value) {
  void* params[] = {&p, &n, &value};
  return api.launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
}

}  // namespace probe

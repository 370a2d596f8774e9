#include "apps/interposer/libcuda.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <atomic>

#include "apps/interposer/entry_points.h"
#include "apps/interposer/real_dlsym.h"

namespace cudadiag::interposer {
namespace {
std::atomic<void*> g_handle{nullptr};
}  // namespace

void remember_libcuda_handle(void* handle) noexcept {
  if (!handle) return;
  void* none = nullptr;
  g_handle.compare_exchange_strong(none, handle, std::memory_order_acq_rel);
}

void* libcuda_handle() noexcept {
  if (void* h = g_handle.load(std::memory_order_acquire)) return h;
  InternalScope internal;
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (h) remember_libcuda_handle(h);
  return g_handle.load(std::memory_order_acquire);
}

void* libcuda_symbol(const char* name) noexcept {
  void* h = libcuda_handle();
  if (!h) return nullptr;
  InternalScope internal;
  DlsymFn real = real_dlsym();
  return real ? real(h, name) : nullptr;
}

CUresult real_get_proc_address(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) noexcept {
  InternalScope internal;
  if (auto v2 = real_fn<PFN_cuGetProcAddress_v12000>(Entry::get_proc_address_v2)) {
    CUdriverProcAddressQueryResult status{};
    return v2(symbol, pfn, cuda_version, flags, &status);
  }
  if (auto v1 = real_fn<PFN_cuGetProcAddress_v11030>(Entry::get_proc_address)) return v1(symbol, pfn, cuda_version, flags);
  *pfn = nullptr;
  return CUDA_ERROR_NOT_FOUND;
}

}  // namespace cudadiag::interposer

// cuGetProcAddress as the interposer answers it. The driver is asked first, with the
// caller's own symbol, cudaVersion, flags and symbolStatus, so the variant (ABI version,
// per-thread default stream or legacy) is always the driver's choice; only when its
// answer is exactly a variant the interposer hooks is it replaced by that variant's hook.
// A variant is recognised by pointer: what the driver answers for the variant's own
// version and stream flag, or what the driver library exports under its name.
#include <cudaTypedefs.h>

#include <atomic>
#include <cstring>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/entry_points.h"
#include "apps/interposer/exported_hooks.h"
#include "apps/interposer/libcuda.h"
#include "apps/interposer/process.h"
#include "apps/interposer/real_dlsym.h"

using namespace cudadiag::interposer;

namespace {

std::atomic<void*> g_answer[kEntryCount];    // the driver's answer for the variant's version and flag
std::atomic<bool> g_answer_known[kEntryCount];

void* driver_answer(Entry e) {
  const int i = static_cast<int>(e);
  if (g_answer_known[i].load(std::memory_order_acquire)) return g_answer[i].load(std::memory_order_relaxed);
  const EntryInfo& info = entry_info(e);
  const cuuint64_t flags =
      info.per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  void* p = nullptr;
  if (real_get_proc_address(info.base, &p, info.version, flags) != CUDA_SUCCESS) p = nullptr;
  g_answer[i].store(p, std::memory_order_relaxed);
  g_answer_known[i].store(true, std::memory_order_release);
  return p;
}

// The hook standing in for `pfn` when it is a variant the interposer replaces.
void* substitute(const char* symbol, void* pfn, int version, cuuint64_t flags) {
  if (!symbol || !pfn || symbol[0] != 'c' || symbol[1] != 'u') return pfn;
  InternalScope internal;
  bool hooked_name = false;
  for (int i = 0; i < kEntryCount; ++i) {
    const Entry e = entry_at(i);
    const EntryInfo& info = entry_info(e);
    // Asked by base name ("cuMemAlloc"), or by the variant's own name ("cuMemAlloc_v2").
    if (std::strcmp(info.base, symbol) != 0 && std::strcmp(info.name, symbol) != 0) continue;
    hooked_name = true;
    if (pfn == driver_answer(e) || pfn == real_entry(e)) {
      remember_real(e, pfn);
      return info.hook;
    }
  }
  if (hooked_name)
    debug_log("cuGetProcAddress(%s, %d, flags %llu): the driver's answer %p is no variant the interposer knows; "
              "passed through",
              symbol, version, static_cast<unsigned long long>(flags), pfn);
  return pfn;
}

}  // namespace

CUresult hook_cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult* symbolStatus) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuGetProcAddress_v12000>(Entry::get_proc_address_v2);
  if (!real) {
    if (pfn) *pfn = nullptr;
    if (symbolStatus) *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  const CUresult rc = real(symbol, pfn, cudaVersion, flags, symbolStatus);
  if (rc == CUDA_SUCCESS && pfn && *pfn) *pfn = substitute(symbol, *pfn, cudaVersion, flags);
  return rc;
}

CUresult hook_cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuGetProcAddress_v11030>(Entry::get_proc_address);
  if (!real) {
    if (pfn) *pfn = nullptr;
    return CUDA_ERROR_NOT_FOUND;
  }
  const CUresult rc = real(symbol, pfn, cudaVersion, flags);
  if (rc == CUDA_SUCCESS && pfn && *pfn) *pfn = substitute(symbol, *pfn, cudaVersion, flags);
  return rc;
}

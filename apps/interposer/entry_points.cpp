#include "apps/interposer/entry_points.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "apps/interposer/exported_hooks.h"
#include "apps/interposer/libcuda.h"
#include "apps/interposer/real_dlsym.h"

namespace cudadiag::interposer {
namespace {

template <class Fn>
void* as_pointer(Fn f) {
  return reinterpret_cast<void*>(f);
}

// Versions: the CUDA release that introduced each variant (cudaTypedefs.h names them
// PFN_<name>_v<version>); the per-thread variants since 7.0 or since the function exists.
const EntryInfo kEntries[kEntryCount] = {
    {"cuGetProcAddress", "cuGetProcAddress", 11030, false, as_pointer(&hook_cuGetProcAddress)},
    {"cuGetProcAddress_v2", "cuGetProcAddress", 12000, false, as_pointer(&hook_cuGetProcAddress_v2)},
    {"cuMemAlloc_v2", "cuMemAlloc", 3020, false, as_pointer(&hook_cuMemAlloc_v2)},
    {"cuMemAllocPitch_v2", "cuMemAllocPitch", 3020, false, as_pointer(&hook_cuMemAllocPitch_v2)},
    {"cuMemFree_v2", "cuMemFree", 3020, false, as_pointer(&hook_cuMemFree_v2)},
    {"cuMemAllocAsync", "cuMemAllocAsync", 11020, false, as_pointer(&hook_cuMemAllocAsync)},
    {"cuMemAllocAsync_ptsz", "cuMemAllocAsync", 11020, true, as_pointer(&hook_cuMemAllocAsync_ptsz)},
    {"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", 11020, false, as_pointer(&hook_cuMemAllocFromPoolAsync)},
    {"cuMemAllocFromPoolAsync_ptsz", "cuMemAllocFromPoolAsync", 11020, true,
     as_pointer(&hook_cuMemAllocFromPoolAsync_ptsz)},
    {"cuMemFreeAsync", "cuMemFreeAsync", 11020, false, as_pointer(&hook_cuMemFreeAsync)},
    {"cuMemFreeAsync_ptsz", "cuMemFreeAsync", 11020, true, as_pointer(&hook_cuMemFreeAsync_ptsz)},
    {"cuMemAllocManaged", "cuMemAllocManaged", 6000, false, as_pointer(&hook_cuMemAllocManaged)},
    {"cuMemAllocHost_v2", "cuMemAllocHost", 3020, false, as_pointer(&hook_cuMemAllocHost_v2)},
    {"cuMemHostAlloc", "cuMemHostAlloc", 2020, false, as_pointer(&hook_cuMemHostAlloc)},
    {"cuMemFreeHost", "cuMemFreeHost", 2000, false, as_pointer(&hook_cuMemFreeHost)},
    {"cuLaunchKernel", "cuLaunchKernel", 4000, false, as_pointer(&hook_cuLaunchKernel)},
    {"cuLaunchKernel_ptsz", "cuLaunchKernel", 7000, true, as_pointer(&hook_cuLaunchKernel_ptsz)},
    {"cuLaunchKernelEx", "cuLaunchKernelEx", 11060, false, as_pointer(&hook_cuLaunchKernelEx)},
    {"cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", 11060, true, as_pointer(&hook_cuLaunchKernelEx_ptsz)},
    {"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", 9000, false,
     as_pointer(&hook_cuLaunchCooperativeKernel)},
    {"cuLaunchCooperativeKernel_ptsz", "cuLaunchCooperativeKernel", 9000, true,
     as_pointer(&hook_cuLaunchCooperativeKernel_ptsz)},
    {"cuTensorMapEncodeTiled", "cuTensorMapEncodeTiled", 12000, false, as_pointer(&hook_cuTensorMapEncodeTiled)},
    {"cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2col", 12000, false, as_pointer(&hook_cuTensorMapEncodeIm2col)},
    {"cuTensorMapEncodeIm2colWide", "cuTensorMapEncodeIm2colWide", 12080, false,
     as_pointer(&hook_cuTensorMapEncodeIm2colWide)},
    {"cuIpcGetMemHandle", "cuIpcGetMemHandle", 4010, false, as_pointer(&hook_cuIpcGetMemHandle)},
    {"cuIpcOpenMemHandle", "cuIpcOpenMemHandle", 4010, false, as_pointer(&hook_cuIpcOpenMemHandle)},
    {"cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle", 11000, false, as_pointer(&hook_cuIpcOpenMemHandle_v2)},
    {"cuIpcCloseMemHandle", "cuIpcCloseMemHandle", 4010, false, as_pointer(&hook_cuIpcCloseMemHandle)},
    {"cuMemRetainAllocationHandle", "cuMemRetainAllocationHandle", 11000, false,
     as_pointer(&hook_cuMemRetainAllocationHandle)},
    {"cuMemExportToShareableHandle", "cuMemExportToShareableHandle", 10020, false,
     as_pointer(&hook_cuMemExportToShareableHandle)},
    {"cuMemMap", "cuMemMap", 10020, false, as_pointer(&hook_cuMemMap)},
    {"cuMemUnmap", "cuMemUnmap", 10020, false, as_pointer(&hook_cuMemUnmap)},
    {"cuCtxEnablePeerAccess", "cuCtxEnablePeerAccess", 4000, false, as_pointer(&hook_cuCtxEnablePeerAccess)},
    {"cuCtxDisablePeerAccess", "cuCtxDisablePeerAccess", 4000, false, as_pointer(&hook_cuCtxDisablePeerAccess)},
};

std::atomic<void*> g_real[kEntryCount];

// The function named `name` in whatever comes after the interposer, else in the driver
// library the program loaded (a runtime may dlopen it privately).
void* look_up_driver_export(const char* name) {
  InternalScope internal;
  void* p = nullptr;
  if (DlsymFn real = real_dlsym()) p = real(RTLD_NEXT, name);
  if (!p || is_hook(p)) p = libcuda_symbol(name);
  return is_hook(p) ? nullptr : p;
}

}  // namespace

const EntryInfo& entry_info(Entry e) noexcept { return kEntries[static_cast<int>(e)]; }

bool find_entry(const char* name, Entry& out) noexcept {
  if (!name || name[0] != 'c' || name[1] != 'u') return false;
  for (int i = 0; i < kEntryCount; ++i) {
    if (std::strcmp(kEntries[i].name, name) == 0) {
      out = entry_at(i);
      return true;
    }
  }
  return false;
}

bool is_hook(const void* p) noexcept {
  if (!p) return false;
  for (const EntryInfo& e : kEntries)
    if (e.hook == p) return true;
  return false;
}

void remember_real(Entry e, void* p) noexcept {
  if (!p || is_hook(p)) return;
  void* none = nullptr;
  g_real[static_cast<int>(e)].compare_exchange_strong(none, p, std::memory_order_acq_rel);
}

void* real_entry(Entry e) noexcept {
  const int i = static_cast<int>(e);
  if (void* p = g_real[i].load(std::memory_order_acquire)) return p;
  void* p = look_up_driver_export(kEntries[i].name);
  if (p) remember_real(e, p);
  return g_real[i].load(std::memory_order_acquire);
}

}  // namespace cudadiag::interposer

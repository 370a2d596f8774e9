#pragma once
// The driver entry points the interposer replaces: one row per concrete variant (name as
// the driver exports it, the base name cuGetProcAddress is asked for, the CUDA version
// that introduced the variant, whether it is the per-thread default stream one), the
// hook that replaces it, and the driver's own function behind each hook.
#include <cstdint>

namespace cudadiag::interposer {

enum class Entry : std::uint8_t {
  get_proc_address,
  get_proc_address_v2,
  mem_alloc,
  mem_alloc_pitch,
  mem_free,
  mem_alloc_async,
  mem_alloc_async_ptsz,
  mem_alloc_from_pool_async,
  mem_alloc_from_pool_async_ptsz,
  mem_free_async,
  mem_free_async_ptsz,
  mem_alloc_managed,
  mem_alloc_host,
  mem_host_alloc,
  mem_free_host,
  launch_kernel,
  launch_kernel_ptsz,
  launch_kernel_ex,
  launch_kernel_ex_ptsz,
  launch_cooperative_kernel,
  launch_cooperative_kernel_ptsz,
  tensor_map_encode_tiled,
  tensor_map_encode_im2col,
  tensor_map_encode_im2col_wide,
  ipc_get_mem_handle,
  ipc_open_mem_handle,
  ipc_open_mem_handle_v2,
  ipc_close_mem_handle,
  mem_retain_allocation_handle,
  mem_export_to_shareable_handle,
  mem_map,
  mem_unmap,
  ctx_enable_peer_access,
  ctx_disable_peer_access,
  count,
};

inline constexpr int kEntryCount = static_cast<int>(Entry::count);

struct EntryInfo {
  const char* name;   // exported symbol: "cuMemAlloc_v2"
  const char* base;   // what cuGetProcAddress is asked for: "cuMemAlloc"
  int version;        // CUDA version that introduced this variant (cuGetProcAddress's cudaVersion)
  bool per_thread;    // the _ptsz variant (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
  void* hook;         // the interposer's replacement
};

const EntryInfo& entry_info(Entry e) noexcept;
inline Entry entry_at(int i) noexcept { return static_cast<Entry>(i); }

// The entry exported under `name`; false for every other name (quickly for non-"cu" ones).
bool find_entry(const char* name, Entry& out) noexcept;
bool is_hook(const void* p) noexcept;

// The driver's function behind a hook: the one handed out by dlsym or cuGetProcAddress,
// else looked up after the interposer and in the loaded driver library; null when the
// driver has none.
void* real_entry(Entry e) noexcept;
// Keeps `p` as the driver's function for `e` unless one is known or `p` is a hook.
void remember_real(Entry e, void* p) noexcept;

template <class Fn>
Fn real_fn(Entry e) noexcept {
  return reinterpret_cast<Fn>(real_entry(e));
}

}  // namespace cudadiag::interposer

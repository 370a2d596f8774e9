#include "apps/interposer/kernel_info.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "apps/interposer/driver_calls.h"
#include "apps/interposer/timed_call.h"

namespace cudadiag::interposer {
namespace {

// Open addressing without a lock: a slot's function is claimed once (compare-exchange
// from null) and never changes; its info is published after the driver was asked, and
// replaced when a forked child meets the kernel in its own ring. Infos are never freed
// (launches keep pointers to them; an info replaced is a few hundred bytes per fork). A
// module unloaded and a new function at the same address keeps the old name: rare, and
// only a label.
struct Slot {
  std::atomic<CUfunction> function;
  std::atomic<const KernelInfo*> info;  // null until the first look-up is published
};
constexpr std::size_t kSlots = std::size_t{1} << 16;
constinit Slot g_slots[kSlots] = {};

std::size_t hash(CUfunction f) {
  auto v = reinterpret_cast<std::uint64_t>(f);
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return static_cast<std::size_t>(v);
}

// The slot that holds `f`, claimed for it when it holds none yet; null when the table is full.
Slot* slot_for(CUfunction f) {
  const std::size_t home = hash(f) & (kSlots - 1);
  for (std::size_t i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[(home + i) & (kSlots - 1)];
    CUfunction at = s.function.load(std::memory_order_acquire);
    if (!at && s.function.compare_exchange_strong(at, f, std::memory_order_acq_rel)) return &s;
    if (at == f) return &s;
  }
  return nullptr;
}

const char* name_of(const DriverCalls& d, CUfunction f) {
  const char* name = nullptr;
  if (d.func_get_name && d.func_get_name(&name, f) == CUDA_SUCCESS && name) return name;
  // A CUkernel (cudart's library-based launches) may stand in for a CUfunction.
  if (d.kernel_get_name && d.kernel_get_name(&name, reinterpret_cast<CUkernel>(f)) == CUDA_SUCCESS && name)
    return name;
  return nullptr;
}

CUresult param_info(const DriverCalls& d, CUfunction f, size_t i, size_t& offset, size_t& size) {
  CUresult rc = CUDA_ERROR_NOT_SUPPORTED;
  if (d.func_get_param_info) rc = d.func_get_param_info(f, i, &offset, &size);
  if (rc != CUDA_SUCCESS && d.kernel_get_param_info)
    rc = d.kernel_get_param_info(reinterpret_cast<CUkernel>(f), i, &offset, &size);
  return rc;
}

void look_up(CUfunction f, RingWriter& ring, KernelInfo& out) {
  const DriverCalls* d = driver_calls();
  if (!d) return;
  if (const char* name = name_of(*d, f)) {
    const size_t length = std::strlen(name);
    std::strncpy(out.name_prefix, name, sizeof out.name_prefix - 1);
    out.name = ring.add_name(name, static_cast<std::uint32_t>(length < 0xffffu ? length : 0xffffu));
  }
  for (int i = 0; i < KernelInfo::kMaxParams; ++i) {
    size_t offset = 0, size = 0;
    if (param_info(*d, f, static_cast<size_t>(i), offset, size) != CUDA_SUCCESS || offset > 0xffff || size > 0xffff)
      break;
    out.param_offset[i] = static_cast<std::uint16_t>(offset);
    out.param_size[i] = static_cast<std::uint16_t>(size);
    out.param_count = static_cast<std::uint16_t>(i + 1);
  }
}

}  // namespace

const KernelInfo* kernel_info(CUfunction f, RingWriter& ring) noexcept {
  Slot* s = slot_for(f);
  if (!s) return nullptr;
  if (const KernelInfo* info = s->info.load(std::memory_order_acquire); info && info->ring == &ring) return info;
  // The driver is asked outside any lock; two threads meeting a new kernel at once both
  // ask, and the name is stored twice (harmless).
  auto* info = static_cast<KernelInfo*>(std::calloc(1, sizeof(KernelInfo)));
  if (!info) return nullptr;
  *info = KernelInfo{};
  info->ring = &ring;
  timed(ring::DriverCall::kernel_lookup, [&] {
    look_up(f, ring, *info);
    return 0;
  });
  s->info.store(info, std::memory_order_release);
  return info;
}

}  // namespace cudadiag::interposer

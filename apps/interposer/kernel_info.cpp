#include "apps/interposer/kernel_info.h"

#include <pthread.h>

#include <cstdlib>
#include <cstring>

#include "apps/interposer/driver_calls.h"
#include "apps/interposer/timed_call.h"

namespace cudadiag::interposer {
namespace {

struct Slot {
  CUfunction function;
  const RingWriter* ring;  // the ring `info->name` refers to (a forked child records elsewhere)
  const KernelInfo* info;  // never freed: launches keep pointers to it
};

// Open addressing, grown at half load; a CUfunction is never removed (a module unloaded
// and a new function at the same address keeps the old name: rare, and only a label).
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
Slot* g_slots = nullptr;
std::size_t g_capacity = 0;
std::size_t g_used = 0;

std::size_t hash(CUfunction f) {
  auto v = reinterpret_cast<std::uint64_t>(f);
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return static_cast<std::size_t>(v);
}

Slot* find(CUfunction f) {
  if (g_capacity == 0) return nullptr;
  for (std::size_t i = hash(f) & (g_capacity - 1);; i = (i + 1) & (g_capacity - 1)) {
    if (g_slots[i].function == f) return &g_slots[i];
    if (!g_slots[i].function) return nullptr;
  }
}

bool grow() {
  const std::size_t capacity = g_capacity ? g_capacity * 2 : 256;
  auto* slots = static_cast<Slot*>(std::calloc(capacity, sizeof(Slot)));
  if (!slots) return false;
  for (std::size_t j = 0; j < g_capacity; ++j) {
    if (!g_slots[j].function) continue;
    std::size_t i = hash(g_slots[j].function) & (capacity - 1);
    while (slots[i].function) i = (i + 1) & (capacity - 1);
    slots[i] = g_slots[j];
  }
  std::free(g_slots);
  g_slots = slots;
  g_capacity = capacity;
  return true;
}

void store(CUfunction f, const RingWriter* ring, const KernelInfo* info) {
  if (Slot* s = find(f)) {
    s->ring = ring;
    s->info = info;
    return;
  }
  if ((g_used + 1) * 2 > g_capacity && !grow()) return;
  std::size_t i = hash(f) & (g_capacity - 1);
  while (g_slots[i].function) i = (i + 1) & (g_capacity - 1);
  g_slots[i].function = f;
  g_slots[i].ring = ring;
  g_slots[i].info = info;
  ++g_used;
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
  pthread_mutex_lock(&g_lock);
  const Slot* s = find(f);
  if (s && s->ring == &ring) {
    const KernelInfo* info = s->info;
    pthread_mutex_unlock(&g_lock);
    return info;
  }
  pthread_mutex_unlock(&g_lock);
  // The driver is asked outside the lock; two threads meeting a new kernel at once both
  // ask, and the name is stored twice (harmless).
  auto* info = static_cast<KernelInfo*>(std::calloc(1, sizeof(KernelInfo)));
  if (!info) return nullptr;
  *info = KernelInfo{};
  timed(ring::DriverCall::kernel_lookup, [&] {
    look_up(f, ring, *info);
    return 0;
  });
  pthread_mutex_lock(&g_lock);
  store(f, &ring, info);
  pthread_mutex_unlock(&g_lock);
  return info;
}

void lock_kernel_cache_for_fork() noexcept { pthread_mutex_lock(&g_lock); }
void unlock_kernel_cache_after_fork() noexcept { pthread_mutex_unlock(&g_lock); }

}  // namespace cudadiag::interposer

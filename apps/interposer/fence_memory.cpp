#include "apps/interposer/fence_memory.h"

#include <pthread.h>

#include <atomic>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/exportable_memory.h"
#include "apps/interposer/guard_budget.h"
#include "apps/interposer/peer_access.h"
#include "apps/interposer/recycle_bin.h"
#include "apps/interposer/reuse_cache.h"
#include "apps/interposer/process.h"
#include "apps/interposer/timed_call.h"

namespace cudadiag::interposer {
namespace {

constexpr int kMaxDevices = 64;
// Address space kept reserved for reuse once the quarantine let it go (no memory).
constexpr std::uint64_t kKeptRangeBytes = 64ull << 30;

// What a fenced allocation on one device needs, looked up once per device.
struct DeviceFacts {
  std::uint64_t granularity = 0;
  CUresult granularity_result = CUDA_SUCCESS;
  bool rdma = false;           // GPUDirect RDMA on VMM memory (cudaMalloc memory has it)
  int peer_count = 0;          // devices that can reach this one's memory as peers
  int peers[kMaxDevices] = {};
};

void release_kept_handle(const DriverCalls& d, const ReuseCache::Item& item) {
  timed(ring::DriverCall::release, [&] { return d.mem_release(item.value); });
}

void free_kept_range(const DriverCalls& d, const ReuseCache::Item& item) {
  timed(ring::DriverCall::address_free, [&] { return d.mem_address_free(item.value, item.bytes); });
  guard_budget().give_back(item.guard);
}

constinit ReuseCache g_kept_memory(&release_kept_handle);
constinit ReuseCache g_kept_ranges(&free_kept_range);
constinit RecycleBin g_recycle_bin(&unmap_recycled);
constinit GuardBudget g_guard_budget;

DeviceFacts g_devices[kMaxDevices];
std::atomic<bool> g_known[kMaxDevices];  // g_devices[i] is complete (written once, under g_lock)
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

CUmemAllocationProp allocation_prop(int device, bool rdma) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.allocFlags.gpuDirectRDMACapable = rdma ? 1 : 0;
  return p;
}

CUmemAccessDesc access_for(int device, CUmemAccess_flags flags) {
  CUmemAccessDesc a{};
  a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  a.location.id = device;
  a.flags = flags;
  return a;
}

// Who may use a new buffer of `device`: the device, then each peer the program enabled
// access from (peer_access.h), as with cuMemAlloc's memory. Returns the count.
int access_list(const DeviceFacts& f, int device, CUmemAccessDesc* out) {
  int n = 0;
  out[n++] = access_for(device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  for (int i = 0; i < f.peer_count; ++i)
    if (peer_access_enabled(f.peers[i], device)) out[n++] = access_for(f.peers[i], CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  return n;
}

void learn(const DriverCalls& d, int device, DeviceFacts& f) {
  const CUmemAllocationProp p = allocation_prop(device, false);
  size_t gran = 0;
  f.granularity_result = d.mem_get_allocation_granularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  f.granularity = f.granularity_result == CUDA_SUCCESS ? gran : 0;
  int rdma = 0;
  if (d.device_get_attribute &&
      d.device_get_attribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, device) ==
          CUDA_SUCCESS)
    f.rdma = rdma != 0;
  int count = 0;
  if (d.device_get_count && d.device_can_access_peer && d.device_get_count(&count) == CUDA_SUCCESS) {
    for (int peer = 0; peer < count && peer < kMaxDevices && f.peer_count < kMaxDevices - 1; ++peer) {
      int can = 0;
      if (peer != device && d.device_can_access_peer(&can, peer, device) == CUDA_SUCCESS && can)
        f.peers[f.peer_count++] = peer;
    }
  }
}

const DeviceFacts* facts(const DriverCalls& d, int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  if (g_known[device].load(std::memory_order_acquire)) return &g_devices[device];
  pthread_mutex_lock(&g_lock);
  if (!g_known[device].load(std::memory_order_relaxed)) {
    learn(d, device, g_devices[device]);
    g_known[device].store(true, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_lock);
  return &g_devices[device];
}

bool fail(FenceFailure& why, ring::VmmCall call, CUresult rc) {
  why.call = call;
  why.result = rc;
  return false;
}

CUresult create_once(const DriverCalls& d, int device, bool rdma, std::uint64_t size,
                     CUmemGenericAllocationHandle& h) {
  CUmemAllocationProp p = allocation_prop(device, rdma);
  // Exportable, as cudaMalloc's memory is: CUDA IPC of the buffer (exportable_memory.h).
  p.requestedHandleTypes = exportable_handle_type(d, device);
  CUresult rc = timed(ring::DriverCall::create, [&] { return d.mem_create(&h, size, &p, 0); });
  if (rc != CUDA_SUCCESS && rdma) {
    p.allocFlags.gpuDirectRDMACapable = 0;
    rc = timed(ring::DriverCall::create, [&] { return d.mem_create(&h, size, &p, 0); });
  }
  return rc;
}

// Physical memory for a buffer: a freed buffer's of the same size, else new.
CUresult obtain_memory(const DriverCalls& d, int device, bool rdma, std::uint64_t size,
                       CUmemGenericAllocationHandle& h, bool& reused) {
  ReuseCache::Item kept;
  reused = kept_memory().take(device, size, kept);
  if (reused) {
    h = kept.value;
    return CUDA_SUCCESS;
  }
  CUresult rc = create_once(d, device, rdma, size, h);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY && release_kept_memory(d)) rc = create_once(d, device, rdma, size, h);
  return rc;
}

// An address range of `size` for a buffer whose guard the budget counts already: one that
// left quarantine (its last guard leaves the budget: the new one replaces it), else a new
// reservation.
CUresult obtain_range(const DriverCalls& d, std::uint64_t size, CUdeviceptr& base, bool& reused) {
  ReuseCache::Item kept;
  reused = kept_ranges().take(0, size, kept);
  if (reused) {
    base = kept.value;
    guard_budget().give_back(kept.guard);
    return CUDA_SUCCESS;
  }
  return timed(ring::DriverCall::address_reserve, [&] { return d.mem_address_reserve(&base, size, 0, 0, 0); });
}

void release_now(const DriverCalls& d, CUmemGenericAllocationHandle h) {
  timed(ring::DriverCall::release, [&] { return d.mem_release(h); });
}

void free_range_now(const DriverCalls& d, CUdeviceptr base, std::uint64_t size, std::uint64_t guard) {
  timed(ring::DriverCall::address_free, [&] { return d.mem_address_free(base, size); });
  guard_budget().give_back(guard);
}

}  // namespace

ReuseCache& kept_memory() noexcept { return g_kept_memory; }
ReuseCache& kept_ranges() noexcept { return g_kept_ranges; }
RecycleBin& recycle_bin() noexcept { return g_recycle_bin; }
GuardBudget& guard_budget() noexcept { return g_guard_budget; }

void unmap_recycled(const DriverCalls& d, const RecycleBin::Buffer& b, std::uint64_t reuse_limit) noexcept {
  if (unmap_fenced(d, b.device, b.mapped_begin, b.mapped_size, b.handle, reuse_limit) == CUDA_SUCCESS)
    give_back_range(d, b.reserved_begin, b.reserved_size, b.reserved_size - b.mapped_size);
}

bool map_fenced(const DriverCalls& d, int device, std::uint64_t bytes, std::uint64_t align, fence::Side side,
                fence::GuardMode mode, FencedMemory& out, FenceFailure& why) noexcept {
  out.access_generation = peer_access_generation();
  const DeviceFacts* f = facts(d, device);
  if (!f) return fail(why, ring::VmmCall::granularity, CUDA_ERROR_INVALID_DEVICE);
  if (f->granularity == 0 || !fence::is_power_of_two(f->granularity))
    return fail(why, ring::VmmCall::granularity,
                f->granularity_result != CUDA_SUCCESS ? f->granularity_result : CUDA_ERROR_NOT_SUPPORTED);
  const std::uint64_t gran = f->granularity;
  const std::uint64_t a = align < gran ? align : gran;
  // The request rounded up to the alignment and to granules, plus the largest guard, must
  // not wrap.
  const std::uint64_t most_guard = guard_budget().per_buffer() > gran ? guard_budget().per_buffer() : gran;
  if (bytes > ~0ull - a - gran - most_guard) return fail(why, ring::VmmCall::reserve, CUDA_ERROR_OUT_OF_MEMORY);
  const std::uint64_t mapped = fence::mapped_size(bytes, gran, a);
  const std::uint64_t wanted = fence::wanted_guard(mapped, gran, mode);

  // A freed buffer kept mapped with exactly this mapped size and a guard at least as large
  // as a new one would get: placed anew, no driver call, its guard still counted.
  RecycleBin::Buffer kept;
  if (recycle_bin().take(device, side, mapped, guard_budget().would_give(wanted, gran), kept)) {
    // The bin keys a buffer by device, side and mapped size, and a device's granule never
    // changes: placed again against its own guard, the request lands where the buffer is
    // mapped. A buffer that does not is not one map_fenced placed.
    const fence::Layout l = fence::place(kept.reserved_begin, bytes, gran, a, side, kept.reserved_size - mapped);
    if (l.mapped_begin != kept.mapped_begin || l.reserved_size != kept.reserved_size)
      internal_error("the recycle bin gave a buffer mapped at 0x%llx (reservation 0x%llx, %llu bytes) for %llu "
                     "bytes on device %d, which place at 0x%llx (reservation %llu bytes; granule %llu, alignment %llu)",
                     static_cast<unsigned long long>(kept.mapped_begin),
                     static_cast<unsigned long long>(kept.reserved_begin),
                     static_cast<unsigned long long>(kept.reserved_size), static_cast<unsigned long long>(bytes),
                     device, static_cast<unsigned long long>(l.mapped_begin),
                     static_cast<unsigned long long>(l.reserved_size), static_cast<unsigned long long>(gran),
                     static_cast<unsigned long long>(a));
    out.layout = l;
    out.handle = kept.handle;
    out.granularity = gran;
    out.guard_wanted = wanted;
    out.recycled = true;
    return true;
  }

  std::uint64_t guard = guard_budget().take(wanted, gran);
  CUdeviceptr base = 0;
  bool range_reused = false;
  CUresult rc = obtain_range(d, fence::reserved_size(mapped, guard), base, range_reused);
  if (rc != CUDA_SUCCESS && guard > gran) {
    // The address space for a scaled guard was refused: fenced against one granule, as
    // the bound on all guards would have it.
    guard_budget().give_back(guard);
    guard = guard_budget().take(gran, gran);
    rc = obtain_range(d, fence::reserved_size(mapped, guard), base, range_reused);
  }
  if (rc != CUDA_SUCCESS) {
    guard_budget().give_back(guard);
    return fail(why, ring::VmmCall::reserve, rc);
  }
  const std::uint64_t reserved = fence::reserved_size(mapped, guard);
  const fence::Layout l = fence::place(base, bytes, gran, a, side, guard);

  CUmemGenericAllocationHandle h = 0;
  bool handle_reused = false;
  rc = obtain_memory(d, device, f->rdma, mapped, h, handle_reused);
  if (rc != CUDA_SUCCESS) {
    free_range_now(d, base, reserved, guard);
    return fail(why, ring::VmmCall::create, rc);
  }
  rc = timed(ring::DriverCall::map, [&] { return d.mem_map(l.mapped_begin, mapped, 0, h, 0); });
  if (rc != CUDA_SUCCESS) {
    release_now(d, h);
    free_range_now(d, base, reserved, guard);
    return fail(why, ring::VmmCall::map, rc);
  }
  CUmemAccessDesc access[kMaxDevices];
  const int access_count = access_list(*f, device, access);
  rc = timed(ring::DriverCall::set_access,
             [&] { return d.mem_set_access(l.mapped_begin, mapped, access, static_cast<size_t>(access_count)); });
  if (rc != CUDA_SUCCESS && access_count > 1)
    rc = timed(ring::DriverCall::set_access, [&] { return d.mem_set_access(l.mapped_begin, mapped, access, 1); });
  if (rc != CUDA_SUCCESS) {
    timed(ring::DriverCall::unmap, [&] { return d.mem_unmap(l.mapped_begin, mapped); });
    release_now(d, h);
    free_range_now(d, base, reserved, guard);
    return fail(why, ring::VmmCall::set_access, rc);
  }
  out.layout = l;
  out.handle = h;
  out.granularity = gran;
  out.guard_wanted = wanted;
  out.guard_cut = guard < fence::guard_size(wanted, gran, 0, guard_budget().per_buffer(), ~0ull);
  out.handle_reused = handle_reused;
  out.range_reused = range_reused;
  return true;
}

CUresult unmap_fenced(const DriverCalls& d, int device, std::uint64_t mapped_begin, std::uint64_t mapped_size,
                      std::uint64_t handle, std::uint64_t reuse_limit) noexcept {
  const CUresult rc = timed(ring::DriverCall::unmap, [&] { return d.mem_unmap(mapped_begin, mapped_size); });
  if (rc == CUDA_SUCCESS) {
    kept_memory().keep(d, ReuseCache::Item{device, mapped_size, handle}, reuse_limit);
  } else {
    release_now(d, handle);  // still mapped: its memory must never back another buffer
  }
  return rc;
}

CUresult set_peer_mapping_access(const DriverCalls& d, std::uint64_t mapped_begin, std::uint64_t mapped_size, int peer,
                                 bool enabled) noexcept {
  const CUmemAccessDesc a =
      access_for(peer, enabled ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE);
  return timed(ring::DriverCall::set_access, [&] { return d.mem_set_access(mapped_begin, mapped_size, &a, 1); });
}

void refresh_peer_access(const DriverCalls& d, int device, std::uint64_t mapped_begin,
                         std::uint64_t mapped_size) noexcept {
  const DeviceFacts* f = facts(d, device);
  if (!f) return;
  for (int i = 0; i < f->peer_count; ++i)
    set_peer_mapping_access(d, mapped_begin, mapped_size, f->peers[i], peer_access_enabled(f->peers[i], device));
}

void give_back_range(const DriverCalls& d, std::uint64_t reserved_begin, std::uint64_t reserved_size,
                     std::uint64_t guard) noexcept {
  kept_ranges().keep(d, ReuseCache::Item{0, reserved_size, reserved_begin, guard}, kKeptRangeBytes);
}

bool release_kept_memory(const DriverCalls& d) noexcept {
  const std::size_t unmapped = recycle_bin().drain(d, 0, recorder());
  return kept_memory().drain(d) > 0 || unmapped > 0;
}

}  // namespace cudadiag::interposer

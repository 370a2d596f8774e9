#include "apps/interposer/device_allocation.h"

#include "apps/interposer/alloc_site.h"

#include "apps/interposer/debug_log.h"
#include "apps/interposer/device_record.h"
#include "apps/interposer/driver_calls.h"
#include "apps/interposer/ipc_export.h"
#include "apps/interposer/peer_access.h"
#include "apps/interposer/process.h"
#include "apps/interposer/quarantine.h"
#include "apps/interposer/recycle_bin.h"
#include "apps/interposer/slack_canary.h"
#include "apps/interposer/timed_call.h"

namespace cudadiag::interposer {
namespace {

fence::Side fence_side(ring::Side s) { return s == ring::Side::front ? fence::Side::front : fence::Side::back; }

bool capturing(const DriverCalls& d, CUstream stream, bool per_thread) {
  auto query = per_thread ? d.stream_is_capturing_ptsz : d.stream_is_capturing;
  if (!query) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  // A failed query counts as capturing: the driver's own call is the safe answer then.
  return query(stream, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// Stream-ordered requests are fenced only where a synchronous allocation means the same:
// no graph capture, a stream of the current context, the device's default pool.
ring::Unfenced stream_ordered_decision(const DriverCalls& d, const AllocationRequest& r, int device) {
  if (capturing(d, r.stream, r.per_thread)) return ring::Unfenced::stream_capture;
  auto get_ctx = r.per_thread ? d.stream_get_ctx_ptsz : d.stream_get_ctx;
  CUcontext stream_ctx = nullptr, current = nullptr;
  if (!get_ctx || !d.ctx_get_current || get_ctx(r.stream, &stream_ctx) != CUDA_SUCCESS ||
      d.ctx_get_current(&current) != CUDA_SUCCESS || stream_ctx != current)
    return ring::Unfenced::foreign_stream;
  CUmemoryPool pool = r.pool, default_pool = nullptr;
  if (!d.device_get_default_mem_pool || d.device_get_default_mem_pool(&default_pool, device) != CUDA_SUCCESS)
    return ring::Unfenced::custom_pool;
  if (!pool && (!d.device_get_mem_pool || d.device_get_mem_pool(&pool, device) != CUDA_SUCCESS))
    return ring::Unfenced::custom_pool;
  return pool == default_pool ? ring::Unfenced::none : ring::Unfenced::custom_pool;
}

void record_free(const FreeRequest& r, const Tracked& t, ring::State state) {
  if (RingWriter* ring = recorder()) ring->set_state(t.record, state, r.api);
}

}  // namespace

ring::Unfenced fence_decision(const AllocationRequest& r, const CallPlace& where) noexcept {
  if (settings().side == ring::Side::none) return ring::Unfenced::fence_off;
  // No device has 2^63 bytes: the driver refuses such a request, and rounding it up to
  // granules plus a guard would wrap to a small size.
  if (r.bytes > kMaxFencedBytes) return ring::Unfenced::too_large;
  const DriverCalls* d = driver_calls();
  if (!d || !d->can_fence() || where.device < 0) return ring::Unfenced::no_context;
  return r.stream_ordered ? stream_ordered_decision(*d, r, where.device) : ring::Unfenced::none;
}

bool allocate_fenced(const AllocationRequest& r, const CallPlace& where, CUdeviceptr& out, FenceFailure& why) noexcept {
  const DriverCalls& d = *driver_calls();
  const int device = where.device;
  const Settings& s = settings();
  const std::uint64_t align = r.min_align > s.align ? r.min_align : s.align;
  FencedMemory m;
  if (!map_fenced(d, device, r.bytes, align, fence_side(s.side), s.guard, m, why)) {
    debug_log("%s of %llu bytes not fenced: %s returned %d", ring::api_name(r.api),
              static_cast<unsigned long long>(r.bytes), ring::vmm_call_name(why.call), static_cast<int>(why.result));
    return false;
  }
  const fence::Layout& l = m.layout;
  Tracked t;
  t.address = l.address;
  t.bytes = r.bytes;
  t.reserved_begin = l.reserved_begin;
  t.reserved_size = l.reserved_size;
  t.mapped_begin = l.mapped_begin;
  t.mapped_size = l.mapped_size;
  t.handle = m.handle;
  t.device = device;
  t.context = where.context;
  t.api = r.api;
  t.kind = Tracked::Kind::fenced;
  // Writes into the alignment slack between the end and the guard do not fault: canaries.
  if (s.side == ring::Side::back) t.slack = arm_slack(d, l.address + r.bytes, l.guard_begin);
  RingWriter* ring = recorder();
  if (ring) {
    if (ring->header()->granularity == 0)
      debug_log("first fenced allocation: %s of %llu bytes at %#llx on device %d (granularity %llu)",
                ring::api_name(r.api), static_cast<unsigned long long>(r.bytes),
                static_cast<unsigned long long>(l.address), device, static_cast<unsigned long long>(m.granularity));
    ring->set_granularity(m.granularity);
    if (m.handle_reused) ring->add(&ring::Header::handles_reused, 1);
    if (m.range_reused) ring->add(&ring::Header::reservations_reused, 1);
    if (m.recycled) ring->add(&ring::Header::recycled, 1);
    if (m.guard_cut) ring->add(&ring::Header::guards_cut, 1);
    AllocationEvent e;
    e.address = l.address;
    e.bytes = r.bytes;
    e.mapped_begin = l.mapped_begin;
    e.mapped_end = l.mapped_end();
    e.guard_begin = l.guard_begin;
    e.guard_end = l.guard_end;
    e.guard_wanted = m.guard_wanted;
    e.stream = reinterpret_cast<std::uint64_t>(r.stream);
    e.api = r.api;
    e.side = s.side;
    e.context = where.context;
    e.device = where.device;
    e.site = capture_allocation_site(*ring);
    note_device(*ring, where.device);
    t.record = ring->add_allocation(e);
  }
  if (!tracked_ranges().insert(t)) {
    // Untracked, its free would reach the driver with a pointer the driver never made.
    if (unmap_fenced(d, device, l.mapped_begin, l.mapped_size, m.handle, s.reuse_bytes) == CUDA_SUCCESS)
      give_back_range(d, l.reserved_begin, l.reserved_size, l.guard_size());
    if (ring) ring->set_state(t.record, ring::State::released, ring::Api::unknown);
    why.call = ring::VmmCall::none;
    why.result = CUDA_ERROR_OUT_OF_MEMORY;
    return false;
  }
  // Peer access changed while it was placed: the change may have gone through the fenced
  // buffers before this one was among them.
  if (peer_access_generation() != m.access_generation) refresh_peer_access(d, device, l.mapped_begin, l.mapped_size);
  out = l.address;
  return true;
}

bool release_kept_device_memory() noexcept {
  const DriverCalls* d = driver_calls();
  return d && release_kept_memory(*d);
}

void note_unfenced(const AllocationRequest& r, std::uint64_t address, ring::Unfenced why, const FenceFailure& failure,
                   const CallPlace& where) noexcept {
  Tracked t;
  t.address = address;
  t.bytes = r.bytes;
  t.api = r.api;
  t.kind = Tracked::Kind::unfenced;
  if (RingWriter* ring = recorder()) {
    AllocationEvent e;
    e.address = address;
    e.bytes = r.bytes;
    e.mapped_begin = address;
    e.mapped_end = address + r.bytes;
    e.stream = reinterpret_cast<std::uint64_t>(r.stream);
    e.api = r.api;
    e.side = ring::Side::none;
    e.unfenced_reason = why;
    e.failed_call = failure.call;
    e.failed_result = static_cast<std::int32_t>(failure.result);
    e.context = where.context;
    e.device = where.device;
    e.site = capture_allocation_site(*ring);
    note_device(*ring, where.device);
    t.record = ring->add_allocation(e);
  }
  tracked_ranges().insert(t);
}

void note_host_or_managed(ring::Api api, std::uint64_t address, std::uint64_t bytes, ring::Unfenced why) noexcept {
  AllocationRequest r;
  r.api = api;
  r.bytes = bytes;
  note_unfenced(r, address, why, FenceFailure{}, current_place());
}

FreeResult release_tracked(const FreeRequest& r, Tracked& t, CUresult& rc) noexcept {
  RingWriter* ring = recorder();
  if (ring) ring->add(&ring::Header::frees, 1);
  bool quarantined = false;
  if (!tracked_ranges().take_live(r.address, t, quarantined)) {
    if (!quarantined) return FreeResult::untracked;
    rc = CUDA_ERROR_INVALID_VALUE;  // a second free of a fenced buffer, as the driver answers one
    return FreeResult::done;
  }
  if (t.kind != Tracked::Kind::fenced) return FreeResult::driver_memory;
  // Memory handed to another process (CUDA IPC) may still be mapped there: released when
  // unmapped here, never given to another buffer.
  const bool exported = forget_export(t.address);

  const DriverCalls& d = *driver_calls();
  if (r.stream_ordered && capturing(d, r.stream, r.per_thread)) {
    // Freed inside a graph being captured: the graph may still use it when it runs.
    record_free(r, t, ring::State::freed_unguarded);
    rc = CUDA_SUCCESS;
    return FreeResult::done;
  }
  // Work queued before the free may still use the buffer: wait for it before unmapping,
  // as the driver's own free does (cuMemFree waits for the work of the context the memory
  // belongs to, whichever is current on the freeing thread; a stream-ordered free runs
  // after the stream's). Nothing more: no device-wide wait.
  auto sync = r.per_thread ? d.stream_synchronize_ptsz : d.stream_synchronize;
  if (r.stream_ordered && sync) {
    rc = timed(ring::DriverCall::stream_synchronize, [&] { return sync(r.stream); });
    if (rc == CUDA_ERROR_INVALID_CONTEXT) rc = CUDA_SUCCESS;
  } else {
    rc = synchronize_context(d, t.context);
  }
  if (rc == CUDA_SUCCESS) check_slack(d, t, ring::SlackCheck::free);  // the work that may write there is done
  const Settings& s = settings();
  if (rc == CUDA_SUCCESS && s.recycle_bytes > 0 && !exported) {
    // Kept mapped for the next buffer of its mapped size: a use after free of it does not fault.
    record_free(r, t, ring::State::freed_unguarded);
    recycle_bin().keep(d,
                       RecycleBin::Buffer{t.device, fence_side(s.side), t.reserved_begin, t.reserved_size,
                                          t.mapped_begin, t.mapped_size, t.handle},
                       s.recycle_bytes, s.reuse_bytes, ring);
    return FreeResult::done;
  }
  if (unmap_fenced(d, t.device, t.mapped_begin, t.mapped_size, t.handle, exported ? 0 : s.reuse_bytes) !=
      CUDA_SUCCESS) {
    // Still mapped: a use after free would not fault, and the range is never reused.
    debug_log("%s of %#llx: cuMemUnmap failed; the buffer stays mapped", ring::api_name(r.api),
              static_cast<unsigned long long>(t.address));
    record_free(r, t, ring::State::freed_unguarded);
    return FreeResult::done;
  }
  record_free(r, t, ring::State::freed);
  quarantine().admit(d, t, s.quarantine_bytes, ring);
  return FreeResult::done;
}

void finish_driver_free(const FreeRequest& r, const Tracked& t, CUresult rc) noexcept {
  if (rc == CUDA_SUCCESS) {
    record_free(r, t, ring::State::freed_unguarded);
  } else {
    tracked_ranges().insert(t);
  }
}

}  // namespace cudadiag::interposer

#pragma once
// Device memory placed against an unmapped guard with the driver's VMM calls
// (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), placed by the guard
// arithmetic shared with the bundled fence allocator (lib/fence/guard_layout.h): the
// guard is as large as the buffer's mapping (CUDADIAG_GUARD=scaled) within the bounds the
// guard budget keeps (guard_budget.h), or one granule (CUDADIAG_GUARD=granule). The
// physical memory and address ranges of freed buffers are reused where they fit
// (reuse_cache.h); every call is counted and timed in the ring (timed_call.h).
#include <cuda.h>

#include <cstdint>

#include "fence/guard_layout.h"
#include "apps/interposer/driver_calls.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

struct FencedMemory {
  fence::Layout layout;
  std::uint64_t handle = 0;  // CUmemGenericAllocationHandle
  std::uint64_t granularity = 0;
  std::uint64_t guard_wanted = 0;  // the guard the buffer's size called for (layout.guard_size(): what it got)
  bool guard_cut = false;          // smaller than the per-buffer bound allows: the bound on all guards was
                                   //   reached, or the address space for a scaled guard was refused
  bool handle_reused = false;  // the physical memory of a freed buffer
  bool range_reused = false;   // an address range that left quarantine
  bool recycled = false;       // a freed buffer's mapping (recycle_bin.h): no driver call
  std::uint64_t access_generation = 0;  // peer_access_generation() before its access was chosen
};

// The VMM step that failed and how.
struct FenceFailure {
  ring::VmmCall call = ring::VmmCall::none;
  CUresult result = CUDA_SUCCESS;
};

// Maps `bytes` on `device` flush against a guard sized by `mode`; on failure nothing stays
// allocated. The pointer is aligned to `align` (at most a granule). Access is granted to
// the device and to each peer the program enabled access from (peer_access.h), as
// cuMemAlloc's memory would be reachable: no other device. When cuMemCreate runs out of
// memory, the kept physical memory goes back first and it is asked once more; when a
// scaled guard's reservation is refused, the buffer is placed against one granule.
bool map_fenced(const DriverCalls& d, int device, std::uint64_t bytes, std::uint64_t align, fence::Side side,
                fence::GuardMode mode, FencedMemory& out, FenceFailure& why) noexcept;

// Unmaps a fenced buffer (no queued work may use it any more). Its physical memory is
// kept for reuse (up to `reuse_limit` bytes in all) or released; the address range stays
// reserved. When the unmap fails the mapping stays, and its memory is released, never
// reused. Returns the unmap's result.
CUresult unmap_fenced(const DriverCalls& d, int device, std::uint64_t mapped_begin, std::uint64_t mapped_size,
                      std::uint64_t handle, std::uint64_t reuse_limit) noexcept;

// Grants (`enabled`) or takes away a peer device's read-write access to a fenced mapping,
// when the program enables or disables peer access after the buffer was placed.
CUresult set_peer_mapping_access(const DriverCalls& d, std::uint64_t mapped_begin, std::uint64_t mapped_size, int peer,
                                 bool enabled) noexcept;

// Sets every peer's access to a fenced mapping of `device` to what the program enabled now
// (a buffer placed while peer access changed).
void refresh_peer_access(const DriverCalls& d, int device, std::uint64_t mapped_begin,
                         std::uint64_t mapped_size) noexcept;

// An address range nothing is mapped in any more, whose last buffer had a guard of `guard`
// bytes: kept for an allocation of the same reserved size (a range the quarantine let
// go), else freed; its guard leaves the guard budget when it is freed.
void give_back_range(const DriverCalls& d, std::uint64_t reserved_begin, std::uint64_t reserved_size,
                     std::uint64_t guard) noexcept;

// The driver ran out of memory: the buffers kept mapped for recycling are unmapped and
// the kept physical memory goes back to it. True when there was some (asking again may
// succeed).
bool release_kept_memory(const DriverCalls& d) noexcept;

}  // namespace cudadiag::interposer

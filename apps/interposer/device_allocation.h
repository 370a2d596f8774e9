#pragma once
// The allocation and free paths behind the memory hooks: place a device allocation
// against a guard when it can, else let the driver's own call answer (an allocation the
// driver would grant is never refused), and record either; free what the interposer
// placed itself, hand everything else to the driver's own free.
#include <cuda.h>

#include <cstdint>

#include "apps/interposer/driver_calls.h"
#include "apps/interposer/fence_memory.h"
#include "apps/interposer/tracked_ranges.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

struct AllocationRequest {
  ring::Api api = ring::Api::unknown;
  std::uint64_t bytes = 0;
  std::uint64_t min_align = 0;     // at least this alignment (pitched memory), else the setting
  bool stream_ordered = false;     // cuMemAlloc(FromPool)Async: check capture, context and pool
  bool per_thread = false;         // a _ptsz entry point: stream 0 is the per-thread stream
  CUstream stream = nullptr;
  CUmemoryPool pool = nullptr;     // FromPool: the pool asked for
};

// Larger requests go to the driver's own call (which refuses them) as they are.
inline constexpr std::uint64_t kMaxFencedBytes = 1ull << 62;

// Whether to fence this request, made where the program's call runs: Unfenced::none when
// the interposer should try, else why not.
ring::Unfenced fence_decision(const AllocationRequest& r, const CallPlace& where) noexcept;
// Places the request against a guard on where's device, tracks and records it; false
// (and why) on failure.
bool allocate_fenced(const AllocationRequest& r, const CallPlace& where, CUdeviceptr& out, FenceFailure& why) noexcept;
// Gives the physical memory kept for reuse back to the driver; true when there was some.
bool release_kept_device_memory() noexcept;
// Tracks and records memory the driver's own call allocated.
void note_unfenced(const AllocationRequest& r, std::uint64_t address, ring::Unfenced why, const FenceFailure& failure,
                   const CallPlace& where) noexcept;

template <class DriverAlloc>
CUresult allocate_device(const AllocationRequest& r, CUdeviceptr* dptr, DriverAlloc&& driver_alloc) {
  const CallPlace where = current_place();
  FenceFailure failure;
  ring::Unfenced why = ring::Unfenced::zero_bytes;
  if (dptr && r.bytes != 0) why = fence_decision(r, where);
  if (why == ring::Unfenced::none) {
    if (allocate_fenced(r, where, *dptr, failure)) return CUDA_SUCCESS;
    why = ring::Unfenced::vmm_failed;
  }
  CUresult rc = driver_alloc();
  // Out of memory while the interposer keeps freed buffers' memory for reuse: it goes back first.
  if (rc == CUDA_ERROR_OUT_OF_MEMORY && release_kept_device_memory()) rc = driver_alloc();
  if (rc == CUDA_SUCCESS && dptr && *dptr != 0) note_unfenced(r, *dptr, why, failure, where);
  return rc;
}

// Host or managed memory: never fenced, recorded.
void note_host_or_managed(ring::Api api, std::uint64_t address, std::uint64_t bytes, ring::Unfenced why) noexcept;

struct FreeRequest {
  ring::Api api = ring::Api::unknown;
  std::uint64_t address = 0;
  bool stream_ordered = false;  // cuMemFreeAsync: wait for `stream`, not the context
  bool per_thread = false;
  CUstream stream = nullptr;
};

enum class FreeResult : std::uint8_t {
  untracked,      // never seen: the driver's own free answers
  driver_memory,  // the driver's allocator made it: its free answers, then finish_driver_free
  done,           // the interposer freed it; `rc` is the answer
};

// Takes the buffer out of the live set. A buffer the interposer placed is freed here: wait
// for the work that may still use it (as cuMemFree does: the context's work, or the
// stream's for a stream-ordered free), unmap, keep its memory for reuse, quarantine the
// range. `rc` is then the error the wait reported (the driver's own free reports it as
// well), or CUDA_ERROR_INVALID_VALUE for a second free.
FreeResult release_tracked(const FreeRequest& r, Tracked& t, CUresult& rc) noexcept;
// After the driver's own free of memory it allocated: recorded as freed, or kept live when
// the free failed.
void finish_driver_free(const FreeRequest& r, const Tracked& t, CUresult rc) noexcept;

template <class DriverFree>
CUresult free_device(const FreeRequest& r, DriverFree&& driver_free) {
  Tracked t;
  CUresult rc = CUDA_SUCCESS;
  switch (release_tracked(r, t, rc)) {
    case FreeResult::done:
      return rc;
    case FreeResult::driver_memory:
      rc = driver_free();
      finish_driver_free(r, t, rc);
      return rc;
    case FreeResult::untracked:
      break;
  }
  return driver_free();
}

}  // namespace cudadiag::interposer

#pragma once
// Freed fenced buffers kept mapped for the next fenced allocation of the same mapped size
// on the same device and side (CUDADIAG_FENCE_RECYCLE_MB) whose guard is at least as
// large as that allocation would get anew (guard_budget.h). Such an allocation costs no
// driver call: the freed buffer's reservation, memory, mapping and access serve it, and
// its pointer is placed flush against the same guard, so an overrun (or, fenced at the
// front, an underrun) still faults at the first byte, and as far from it as before. The price: a freed buffer stays
// mapped, so a use after free of it does not fault (the quarantine's rung watches that).
// Bounded in mapped bytes; the oldest buffers beyond the bound are unmapped and go the
// way of any freed buffer's memory and range (fence_memory.h), as do all of them when the
// driver runs out of memory.
#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "apps/interposer/driver_calls.h"
#include "fence/guard_layout.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

class RingWriter;

class RecycleBin {
 public:
  struct Buffer {
    std::int32_t device = 0;
    fence::Side side = fence::Side::back;
    std::uint64_t reserved_begin = 0;
    std::uint64_t reserved_size = 0;  // the mapping and its guard
    std::uint64_t mapped_begin = 0;
    std::uint64_t mapped_size = 0;  // 0: an empty entry
    std::uint64_t handle = 0;       // CUmemGenericAllocationHandle
  };
  // Unmaps a buffer that leaves the bin.
  using Unmap = void (*)(const DriverCalls& d, const Buffer& b, std::uint64_t reuse_limit);

  explicit constexpr RecycleBin(Unmap unmap) noexcept : unmap_(unmap) {}

  // Takes out the newest buffer of exactly `mapped_size` on `device` and `side` whose guard
  // (reserved_size - mapped_size) is at least `min_guard` bytes.
  bool take(std::int32_t device, fence::Side side, std::uint64_t mapped_size, std::uint64_t min_guard,
            Buffer& out) noexcept;
  // Keeps `b` mapped, then unmaps the oldest buffers while more than `limit_bytes` are
  // kept (`b` itself when it is larger than the limit or the bin cannot grow). Their
  // physical memory is kept for reuse up to `reuse_limit` bytes. Driver calls are made
  // outside the lock.
  void keep(const DriverCalls& d, const Buffer& b, std::uint64_t limit_bytes, std::uint64_t reuse_limit,
            RingWriter* ring) noexcept;
  // Unmaps every kept buffer; how many there were.
  std::size_t drain(const DriverCalls& d, std::uint64_t reuse_limit, RingWriter* ring) noexcept;
  std::uint64_t bytes() noexcept;

  void lock_for_fork() noexcept { pthread_mutex_lock(&lock_); }
  void unlock_after_fork() noexcept { pthread_mutex_unlock(&lock_); }

 private:
  bool push(const Buffer& b) noexcept;  // under the lock
  void compact() noexcept;              // under the lock
  // Under the lock: moves the oldest buffers into out[n..max) while more than keep_bytes
  // are kept; the bytes taken.
  std::uint64_t take_oldest(std::uint64_t keep_bytes, Buffer* out, std::size_t& n, std::size_t max) noexcept;

  Unmap unmap_;
  pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
  Buffer* items_ = nullptr;  // oldest first; taken entries are left empty until compacted
  std::size_t used_ = 0;     // entries in use, taken ones included
  std::size_t capacity_ = 0;
  std::size_t live_ = 0;     // entries holding a buffer
  std::size_t oldest_ = 0;   // no buffer before this entry
  std::uint64_t bytes_ = 0;
};

// The process's bin, and what it does with a buffer that leaves: fence_memory.cpp.
RecycleBin& recycle_bin() noexcept;

// Gives a kept buffer back: unmapped, its memory kept for reuse or released, its range
// kept or freed (fence_memory.h).
void unmap_recycled(const DriverCalls& d, const RecycleBin::Buffer& b, std::uint64_t reuse_limit) noexcept;

}  // namespace cudadiag::interposer

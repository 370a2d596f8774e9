#pragma once
// Driver resources of freed fenced buffers, kept for the next fenced allocation that
// needs exactly the same: physical memory (a cuMemCreate handle, by device and size) and
// address ranges that left quarantine (by size). cuMemCreate and cuMemAddressReserve,
// with cuMemRelease and cuMemAddressFree on the way back, are the costly half of a fenced
// buffer's life; mapping and unmapping stay per buffer. A reused handle is mapped at an
// address range no live or quarantined buffer holds, so a use after free still faults.
// Bounded in bytes and entries; the oldest entries give way first, and every entry goes
// back to the driver when it runs out of memory. No driver calls of its own: what to do
// with an item that leaves is given at construction.
#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "apps/interposer/driver_calls.h"

namespace cudadiag::interposer {

class ReuseCache {
 public:
  struct Item {
    std::int32_t device = 0;   // physical memory: its device; address ranges: 0
    std::uint64_t bytes = 0;   // the handle's size, or the range's
    std::uint64_t value = 0;   // CUmemGenericAllocationHandle, or the range's first address
    std::uint64_t guard = 0;   // address ranges: the guard bytes its last buffer had, as the
                               //   guard budget counts them (guard_budget.h); memory: 0
  };
  // Gives one item back to the driver.
  using Release = void (*)(const DriverCalls& d, const Item& item);
  static constexpr std::size_t kCapacity = 256;

  explicit constexpr ReuseCache(Release release) noexcept : release_(release) {}

  // Takes out the newest item of exactly `bytes` on `device`; false when there is none.
  bool take(std::int32_t device, std::uint64_t bytes, Item& out) noexcept;
  // Keeps `item` (an item larger than `limit_bytes` is released at once), then releases
  // the oldest items while more than `limit_bytes` are kept. The driver is called outside
  // the lock.
  void keep(const DriverCalls& d, const Item& item, std::uint64_t limit_bytes) noexcept;
  // Releases every item; how many there were.
  std::size_t drain(const DriverCalls& d) noexcept;
  std::uint64_t bytes() noexcept;

  void lock_for_fork() noexcept { pthread_mutex_lock(&lock_); }
  void unlock_after_fork() noexcept { pthread_mutex_unlock(&lock_); }

 private:
  void release_all(const DriverCalls& d, const Item* items, std::size_t n) noexcept;

  Release release_;
  pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
  Item items_[kCapacity] = {};  // oldest first
  std::size_t count_ = 0;
  std::uint64_t bytes_ = 0;
};

// Physical memory of freed fenced buffers (released with cuMemRelease) and address
// ranges that left quarantine (freed with cuMemAddressFree): fence_memory.cpp.
ReuseCache& kept_memory() noexcept;
ReuseCache& kept_ranges() noexcept;

}  // namespace cudadiag::interposer

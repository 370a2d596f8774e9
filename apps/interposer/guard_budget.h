#pragma once
// The address space the fence's guards hold, and the guard each new buffer gets within
// the bounds of lib/fence/guard_layout.h (fence::guard_size): as large as the buffer's
// mapping, cut to the per-buffer bound and to what the bound on all guards leaves, never
// less than one granule. A guard is counted from the buffer's placement until its
// reservation goes back to the driver, however it gets there: live, quarantined, kept
// mapped for recycling, or kept as a bare range for reuse (fence_memory.h). Lock-free:
// one counter.
#include <atomic>
#include <cstdint>

#include "fence/guard_layout.h"

namespace cudadiag::interposer {

class GuardBudget {
 public:
  explicit constexpr GuardBudget(std::uint64_t per_buffer = fence::kMaxGuardBytes,
                                 std::uint64_t total = fence::kMaxGuardTotalBytes) noexcept
      : per_buffer_(per_buffer), total_(total) {}

  // The guard a buffer that wants `wanted` bytes of guard would get now (nothing counted).
  std::uint64_t would_give(std::uint64_t wanted, std::uint64_t granularity) const noexcept;
  // Gives a guard for `wanted` and counts it; the caller hands it back with give_back()
  // when its reservation leaves the fence (or the placement fails).
  std::uint64_t take(std::uint64_t wanted, std::uint64_t granularity) noexcept;
  void give_back(std::uint64_t guard) noexcept;
  std::uint64_t held() const noexcept { return held_.load(std::memory_order_relaxed); }
  // Other bounds from now on (the tests reach the bound on all guards without 16 TiB).
  void set_bounds(std::uint64_t per_buffer, std::uint64_t total) noexcept {
    per_buffer_ = per_buffer;
    total_ = total;
  }
  std::uint64_t per_buffer() const noexcept { return per_buffer_; }
  std::uint64_t total() const noexcept { return total_; }

 private:
  std::uint64_t per_buffer_;
  std::uint64_t total_;
  std::atomic<std::uint64_t> held_{0};
};

// The process's budget (fence_memory.cpp).
GuardBudget& guard_budget() noexcept;

}  // namespace cudadiag::interposer

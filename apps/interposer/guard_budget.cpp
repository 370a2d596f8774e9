#include "apps/interposer/guard_budget.h"

namespace cudadiag::interposer {

std::uint64_t GuardBudget::would_give(std::uint64_t wanted, std::uint64_t granularity) const noexcept {
  return fence::guard_size(wanted, granularity, held(), per_buffer_, total_);
}

std::uint64_t GuardBudget::take(std::uint64_t wanted, std::uint64_t granularity) noexcept {
  std::uint64_t held = held_.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t g = fence::guard_size(wanted, granularity, held, per_buffer_, total_);
    // Saturating: the one-granule floor may take a buffer past the total bound.
    const std::uint64_t next = held + g < held ? ~0ull : held + g;
    if (held_.compare_exchange_weak(held, next, std::memory_order_relaxed)) return g;
  }
}

void GuardBudget::give_back(std::uint64_t guard) noexcept {
  std::uint64_t held = held_.load(std::memory_order_relaxed);
  // Never below zero: a reservation the budget did not count (a range that came back
  // twice would be a bug elsewhere, not a reason to wrap).
  while (!held_.compare_exchange_weak(held, held > guard ? held - guard : 0, std::memory_order_relaxed)) {
  }
}

}  // namespace cudadiag::interposer

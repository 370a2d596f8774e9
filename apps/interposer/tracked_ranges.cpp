#include "apps/interposer/tracked_ranges.h"

#include <cstdlib>
#include <cstring>

namespace cudadiag::interposer {
namespace {

constinit TrackedRanges g_ranges;

// Holds the table's lock for a scope: shared for lookups, exclusive for changes.
class Locked {
 public:
  enum Mode { shared, exclusive };
  Locked(pthread_rwlock_t& l, Mode m) : l_(l) { m == shared ? pthread_rwlock_rdlock(&l_) : pthread_rwlock_wrlock(&l_); }
  ~Locked() { pthread_rwlock_unlock(&l_); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  pthread_rwlock_t& l_;
};

}  // namespace

TrackedRanges& tracked_ranges() noexcept { return g_ranges; }

std::size_t TrackedRanges::lower_bound(std::uint64_t address) const noexcept {
  std::size_t lo = 0, hi = count_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (items_[mid].address < address) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void TrackedRanges::erase_at(std::size_t i) noexcept {
  std::memmove(items_ + i, items_ + i + 1, (count_ - i - 1) * sizeof(Tracked));
  --count_;
}

bool TrackedRanges::insert(const Tracked& t) noexcept {
  Locked lock(lock_, Locked::exclusive);
  std::size_t i = lower_bound(t.address);
  // Drop what the new range overlaps: the entry before it and those starting inside it.
  if (i > 0 && items_[i - 1].end() > t.address) erase_at(--i);
  while (i < count_ && items_[i].address < t.end()) erase_at(i);
  if (count_ == capacity_) {
    const std::size_t grown = capacity_ ? capacity_ * 2 : 256;
    void* p = std::realloc(items_, grown * sizeof(Tracked));
    if (!p) return false;
    items_ = static_cast<Tracked*>(p);
    capacity_ = grown;
  }
  std::memmove(items_ + i + 1, items_ + i, (count_ - i) * sizeof(Tracked));
  items_[i] = t;
  ++count_;
  return true;
}

bool TrackedRanges::take_live(std::uint64_t address, Tracked& out, bool& quarantined) noexcept {
  Locked lock(lock_, Locked::exclusive);
  quarantined = false;
  const std::size_t i = lower_bound(address);
  if (i == count_ || items_[i].address != address) return false;
  if (items_[i].kind == Tracked::Kind::quarantined) {
    quarantined = true;
    return false;
  }
  out = items_[i];
  erase_at(i);
  return true;
}

std::size_t TrackedRanges::with_slack(Tracked* out, std::size_t from, std::size_t max) noexcept {
  Locked lock(lock_, Locked::shared);
  std::size_t seen = 0, n = 0;
  for (std::size_t i = 0; i < count_ && n < max; ++i) {
    if (items_[i].kind != Tracked::Kind::fenced || items_[i].slack == 0) continue;
    if (seen++ >= from) out[n++] = items_[i];
  }
  return n;
}

std::size_t TrackedRanges::fenced_on(std::int32_t device, std::uint64_t after, Tracked* out,
                                     std::size_t max) noexcept {
  Locked lock(lock_, Locked::shared);
  std::size_t n = 0;
  for (std::size_t i = lower_bound(after + 1); i < count_ && n < max; ++i)
    if (items_[i].kind == Tracked::Kind::fenced && items_[i].device == device) out[n++] = items_[i];
  return n;
}

bool TrackedRanges::remove(std::uint64_t address) noexcept {
  Locked lock(lock_, Locked::exclusive);
  const std::size_t i = lower_bound(address);
  if (i == count_ || items_[i].address != address) return false;
  erase_at(i);
  return true;
}

const Tracked* TrackedRanges::holder(std::uint64_t value) const noexcept {
  const std::size_t i = lower_bound(value + 1);  // first entry starting after value
  if (i == 0) return nullptr;
  const Tracked& t = items_[i - 1];
  return value < t.end() ? &t : nullptr;
}

bool TrackedRanges::containing(std::uint64_t value, Tracked& out) noexcept {
  Locked lock(lock_, Locked::shared);
  const Tracked* t = holder(value);
  if (!t) return false;
  out = *t;
  return true;
}

std::size_t TrackedRanges::keep_known(std::uint64_t* values, std::size_t n) noexcept {
  Locked lock(lock_, Locked::shared);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (holder(values[i])) values[kept++] = values[i];
  return kept;
}

}  // namespace cudadiag::interposer

#include "apps/interposer/reuse_cache.h"

#include <cstring>

namespace cudadiag::interposer {
namespace {
// Items given back by one keep(); the rest go with later ones.
constexpr std::size_t kMaxReleasedAtOnce = 16;
}  // namespace

bool ReuseCache::take(std::int32_t device, std::uint64_t bytes, Item& out) noexcept {
  pthread_mutex_lock(&lock_);
  bool found = false;
  for (std::size_t i = count_; i-- > 0;) {
    if (items_[i].device != device || items_[i].bytes != bytes) continue;
    out = items_[i];
    bytes_ -= items_[i].bytes;
    std::memmove(items_ + i, items_ + i + 1, (count_ - i - 1) * sizeof(Item));
    --count_;
    found = true;
    break;
  }
  pthread_mutex_unlock(&lock_);
  return found;
}

void ReuseCache::keep(const DriverCalls& d, const Item& item, std::uint64_t limit_bytes) noexcept {
  Item out[kMaxReleasedAtOnce + 1];
  std::size_t n = 0;
  pthread_mutex_lock(&lock_);
  if (item.bytes > limit_bytes) {
    out[n++] = item;
  } else {
    if (count_ == kCapacity) {
      out[n++] = items_[0];
      bytes_ -= items_[0].bytes;
      std::memmove(items_, items_ + 1, (count_ - 1) * sizeof(Item));
      --count_;
    }
    items_[count_++] = item;
    bytes_ += item.bytes;
  }
  std::size_t oldest = 0;
  while (bytes_ > limit_bytes && oldest < count_ && n < kMaxReleasedAtOnce + 1) {
    out[n++] = items_[oldest];
    bytes_ -= items_[oldest].bytes;
    ++oldest;
  }
  if (oldest > 0) {
    std::memmove(items_, items_ + oldest, (count_ - oldest) * sizeof(Item));
    count_ -= oldest;
  }
  pthread_mutex_unlock(&lock_);
  release_all(d, out, n);
}

std::size_t ReuseCache::drain(const DriverCalls& d) noexcept {
  Item out[kCapacity];
  pthread_mutex_lock(&lock_);
  const std::size_t n = count_;
  std::memcpy(out, items_, n * sizeof(Item));
  count_ = 0;
  bytes_ = 0;
  pthread_mutex_unlock(&lock_);
  release_all(d, out, n);
  return n;
}

std::uint64_t ReuseCache::bytes() noexcept {
  pthread_mutex_lock(&lock_);
  const std::uint64_t b = bytes_;
  pthread_mutex_unlock(&lock_);
  return b;
}

void ReuseCache::release_all(const DriverCalls& d, const Item* items, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) release_(d, items[i]);
}

}  // namespace cudadiag::interposer

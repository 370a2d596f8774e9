#include "apps/interposer/recycle_bin.h"

#include <cstdlib>
#include <cstring>

#include "apps/interposer/ring_writer.h"

namespace cudadiag::interposer {
namespace {
// Buffers unmapped by one keep(); the rest go with later ones.
constexpr std::size_t kMaxUnmappedAtOnce = 16;
constexpr std::size_t kDrainBatch = 64;
}  // namespace

std::uint64_t RecycleBin::bytes() noexcept {
  pthread_mutex_lock(&lock_);
  const std::uint64_t b = bytes_;
  pthread_mutex_unlock(&lock_);
  return b;
}

void RecycleBin::compact() noexcept {
  std::size_t n = 0;
  for (std::size_t i = oldest_; i < used_; ++i)
    if (items_[i].mapped_size != 0) items_[n++] = items_[i];
  used_ = n;
  oldest_ = 0;
}

bool RecycleBin::push(const Buffer& b) noexcept {
  if (used_ == capacity_ && live_ * 2 <= capacity_) compact();
  if (used_ == capacity_) {
    const std::size_t grown = capacity_ ? capacity_ * 2 : 256;
    auto* p = static_cast<Buffer*>(std::malloc(grown * sizeof(Buffer)));
    if (!p) return false;
    std::size_t n = 0;
    for (std::size_t i = oldest_; i < used_; ++i)
      if (items_[i].mapped_size != 0) p[n++] = items_[i];
    std::free(items_);
    items_ = p;
    used_ = n;
    oldest_ = 0;
    capacity_ = grown;
  }
  items_[used_++] = b;
  ++live_;
  bytes_ += b.mapped_size;
  return true;
}

std::uint64_t RecycleBin::take_oldest(std::uint64_t keep_bytes, Buffer* out, std::size_t& n,
                                      std::size_t max) noexcept {
  std::uint64_t left = 0;
  while (bytes_ > keep_bytes && oldest_ < used_ && n < max) {
    Buffer& o = items_[oldest_++];
    if (o.mapped_size == 0) continue;
    out[n++] = o;
    left += o.mapped_size;
    bytes_ -= o.mapped_size;
    o.mapped_size = 0;
    --live_;
  }
  if (oldest_ == used_) used_ = oldest_ = 0;
  return left;
}

bool RecycleBin::take(std::int32_t device, fence::Side side, std::uint64_t mapped_size, std::uint64_t min_guard,
                      Buffer& out) noexcept {
  if (mapped_size == 0) return false;
  pthread_mutex_lock(&lock_);
  bool found = false;
  for (std::size_t i = used_; i-- > oldest_;) {
    Buffer& b = items_[i];
    if (b.mapped_size != mapped_size || b.device != device || b.side != side) continue;
    if (b.reserved_size - b.mapped_size < min_guard) continue;  // would watch less far than a new one
    out = b;
    bytes_ -= b.mapped_size;
    b.mapped_size = 0;
    --live_;
    if (i + 1 == used_) --used_;
    found = true;
    break;
  }
  pthread_mutex_unlock(&lock_);
  return found;
}

void RecycleBin::keep(const DriverCalls& d, const Buffer& b, std::uint64_t limit_bytes, std::uint64_t reuse_limit,
                      RingWriter* ring) noexcept {
  Buffer out[kMaxUnmappedAtOnce + 1];
  std::size_t n = 0;
  std::uint64_t kept = 0;
  pthread_mutex_lock(&lock_);
  if (b.mapped_size == 0 || b.mapped_size > limit_bytes || !push(b)) {
    out[n++] = b;
  } else {
    kept = b.mapped_size;
  }
  const std::uint64_t left = take_oldest(limit_bytes, out, n, kMaxUnmappedAtOnce + 1);
  pthread_mutex_unlock(&lock_);
  if (ring) {
    if (kept) ring->add(&ring::Header::recycled_bytes, kept);
    if (left) ring->sub(&ring::Header::recycled_bytes, left);
  }
  for (std::size_t i = 0; i < n; ++i) unmap_(d, out[i], reuse_limit);
}

std::size_t RecycleBin::drain(const DriverCalls& d, std::uint64_t reuse_limit, RingWriter* ring) noexcept {
  std::size_t total = 0;
  for (;;) {
    Buffer out[kDrainBatch];
    std::size_t n = 0;
    pthread_mutex_lock(&lock_);
    const std::uint64_t left = take_oldest(0, out, n, kDrainBatch);
    pthread_mutex_unlock(&lock_);
    if (ring && left) ring->sub(&ring::Header::recycled_bytes, left);
    for (std::size_t i = 0; i < n; ++i) unmap_(d, out[i], reuse_limit);
    total += n;
    if (n < kDrainBatch) return total;
  }
}

}  // namespace cudadiag::interposer

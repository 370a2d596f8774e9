#include "apps/interposer/quarantine.h"

#include <cstdlib>

#include "apps/interposer/fence_memory.h"

namespace cudadiag::interposer {
namespace {
constinit Quarantine g_quarantine;
// A free gives back at most this many old reservations (the rest go with later frees).
constexpr int kMaxReleasedPerFree = 16;

// What a held range counts against the limit: the buffer's mapping, not its guard (address
// space only, as large as the buffer), so that the limit reads as bytes of freed buffers.
std::uint64_t held_bytes(const Quarantine::Held& h) noexcept { return h.reserved_size - h.guard; }
}  // namespace

Quarantine& quarantine() noexcept { return g_quarantine; }

bool Quarantine::push(const Held& h) noexcept {
  if (count_ == capacity_) {
    const std::size_t grown = capacity_ ? capacity_ * 2 : 256;
    Held* p = static_cast<Held*>(std::malloc(grown * sizeof(Held)));
    if (!p) return false;
    for (std::size_t i = 0; i < count_; ++i) p[i] = items_[(head_ + i) % capacity_];
    std::free(items_);
    items_ = p;
    head_ = 0;
    capacity_ = grown;
  }
  items_[(head_ + count_) % capacity_] = h;
  ++count_;
  bytes_ += held_bytes(h);
  return true;
}

Quarantine::Held Quarantine::pop() noexcept {
  const Held h = items_[head_];
  head_ = (head_ + 1) % capacity_;
  --count_;
  bytes_ -= held_bytes(h);
  return h;
}

void Quarantine::admit(const DriverCalls& d, Tracked t, std::uint64_t limit_bytes, RingWriter* ring) noexcept {
  t.kind = Tracked::Kind::quarantined;
  const std::uint64_t guard = t.reserved_size > t.mapped_size ? t.reserved_size - t.mapped_size : 0;
  const Held held{t.address, t.reserved_begin, t.reserved_size, guard, t.record};
  // Reservations to give back: the oldest beyond the limit (all of them with a limit of 0),
  // or this one when the FIFO cannot grow. They leave the tracked ranges before their
  // address range is freed, so that a new allocation there is never mistaken for them.
  Held out[kMaxReleasedPerFree];
  int n = 0;
  pthread_mutex_lock(&lock_);
  if (push(held)) {
    tracked_ranges().insert(t);
    if (ring) ring->add(&ring::Header::quarantined_bytes, held_bytes(held));
  } else {
    out[n++] = held;
  }
  while (count_ > 0 && bytes_ > limit_bytes && n < kMaxReleasedPerFree) {
    const Held h = pop();
    tracked_ranges().remove(h.address);
    if (ring) ring->sub(&ring::Header::quarantined_bytes, held_bytes(h));
    out[n++] = h;
  }
  pthread_mutex_unlock(&lock_);
  for (int i = 0; i < n; ++i) {
    give_back_range(d, out[i].reserved_begin, out[i].reserved_size, out[i].guard);
    if (ring) ring->set_state(out[i].record, ring::State::released, ring::Api::unknown);
  }
}

}  // namespace cudadiag::interposer

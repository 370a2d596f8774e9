#pragma once
// Freed fenced buffers: their memory is unmapped at once (and kept for reuse or
// released), their address range stays reserved so that a use after free faults instead
// of landing in a newer allocation. The oldest ranges are given back once the quarantine
// holds more address space than CUDADIAG_FENCE_QUARANTINE_MB: kept for a new buffer of
// the same size, or freed (give_back_range).
#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "apps/interposer/driver_calls.h"
#include "apps/interposer/ring_writer.h"
#include "apps/interposer/tracked_ranges.h"

namespace cudadiag::interposer {

class Quarantine {
 public:
  struct Held {
    std::uint64_t address;
    std::uint64_t reserved_begin;
    std::uint64_t reserved_size;
    std::uint64_t guard;  // bytes of its guard (the guard budget counts them until the range is freed)
    RecordRef record;
  };
  // Keeps `t` (already unmapped) as quarantined, then gives back the oldest reservations
  // beyond `limit_bytes`, recording both in `ring` (may be null).
  void admit(const DriverCalls& d, Tracked t, std::uint64_t limit_bytes, RingWriter* ring) noexcept;

  void lock_for_fork() noexcept { pthread_mutex_lock(&lock_); }
  void unlock_after_fork() noexcept { pthread_mutex_unlock(&lock_); }

 private:
  bool push(const Held& h) noexcept;
  Held pop() noexcept;

  pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
  Held* items_ = nullptr;  // a FIFO in a ring buffer
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
  std::uint64_t bytes_ = 0;
};

Quarantine& quarantine() noexcept;

}  // namespace cudadiag::interposer

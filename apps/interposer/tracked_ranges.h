#pragma once
// Every allocation the interposer knows of, live or quarantined, sorted by address: frees
// find their allocation, launches find which allocation an argument points into.
#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "apps/interposer/ring_writer.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

struct Tracked {
  enum class Kind : std::uint8_t {
    fenced,       // live, placed against a guard by the interposer
    unfenced,     // live, made by the driver's own allocator
    quarantined,  // freed fenced buffer: unmapped, its range still reserved
    imported,     // live, another process's fenced buffer mapped here against a guard (ipc_import.h)
  };
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t reserved_begin = 0;  // fenced: the reservation
  std::uint64_t reserved_size = 0;
  std::uint64_t mapped_begin = 0;    // fenced: the mapping inside it
  std::uint64_t mapped_size = 0;
  std::uint64_t handle = 0;          // fenced: CUmemGenericAllocationHandle
  std::int32_t device = -1;          // fenced: where its memory lives
  std::uint64_t context = 0;         // the context it was allocated in (CUcontext; 0: none): a free waits on it
  std::uint32_t slack = 0;           // fenced at its end: bytes of canaries between its end and the guard
  RecordRef record;
  ring::Api api = ring::Api::unknown;
  Kind kind = Kind::unfenced;

  // One past the last byte; a zero-byte buffer still covers its first address.
  std::uint64_t end() const noexcept { return address + (bytes ? bytes : 1); }
};

class TrackedRanges {
 public:
  // False when the table cannot grow (out of host memory). Entries the new one overlaps
  // are dropped: their memory was given back behind the interposer's back.
  bool insert(const Tracked& t) noexcept;
  // Removes the live entry that starts at `address`. `quarantined` tells a second free of
  // a fenced buffer apart from a pointer the interposer never saw.
  bool take_live(std::uint64_t address, Tracked& out, bool& quarantined) noexcept;
  bool remove(std::uint64_t address) noexcept;
  // The entry whose [address, end()) holds `value`.
  bool containing(std::uint64_t value, Tracked& out) noexcept;
  // Keeps, in order, those of `values[0, n)` that some entry holds (one lookup under one
  // lock for a whole launch); returns how many.
  std::size_t keep_known(std::uint64_t* values, std::size_t n) noexcept;
  // Copies up to `max` live fenced entries with slack canaries, from the `from`th such
  // entry on; returns how many were copied (fewer than max: the last ones).
  std::size_t with_slack(Tracked* out, std::size_t from, std::size_t max) noexcept;
  // Copies up to `max` live fenced entries whose memory lives on `device` and that start
  // after `after`, in address order; returns how many (fewer than max: the last ones).
  std::size_t fenced_on(std::int32_t device, std::uint64_t after, Tracked* out, std::size_t max) noexcept;

  // Held across fork(); the child starts with a fresh lock (a write lock taken by the
  // parent's thread cannot be released by the child's).
  void lock_for_fork() noexcept { pthread_rwlock_wrlock(&lock_); }
  void unlock_in_parent() noexcept { pthread_rwlock_unlock(&lock_); }
  void reset_in_child() noexcept { pthread_rwlock_init(&lock_, nullptr); }

 private:
  std::size_t lower_bound(std::uint64_t address) const noexcept;  // first entry at or after address
  const Tracked* holder(std::uint64_t value) const noexcept;      // caller holds the lock
  void erase_at(std::size_t i) noexcept;

  pthread_rwlock_t lock_ = PTHREAD_RWLOCK_INITIALIZER;
  Tracked* items_ = nullptr;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
};

TrackedRanges& tracked_ranges() noexcept;

}  // namespace cudadiag::interposer

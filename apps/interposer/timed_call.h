#pragma once
// The interposer's own driver calls, counted and timed into the ring's header
// (ring::DriverCall) when the process records: what the fence costs, call by call
// (cudadiag-ring-dump prints it). Two clock reads a call (vDSO, tens of nanoseconds)
// against driver calls of microseconds.
#include <time.h>

#include <cstdint>

#include "apps/interposer/process.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

inline std::uint64_t monotonic_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(t.tv_nsec);
}

// Calls `fn` and returns what it returned, counted under `c` with its duration.
template <class Fn>
auto timed(ring::DriverCall c, Fn&& fn) noexcept {
  RingWriter* ring = recorder();
  if (!ring) return fn();
  const std::uint64_t start = monotonic_ns();
  auto result = fn();
  ring->add_driver_call(c, monotonic_ns() - start);
  return result;
}

}  // namespace cudadiag::interposer

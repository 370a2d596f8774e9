#pragma once
// What the interposer reads from its environment, parsed once at load. A value that
// does not parse keeps its default; the rejection is kept for the debug log (the
// interposer never writes to the program's output otherwise).
#include <cstdint>

#include "apps/interposer/ring_writer.h"
#include "fence/guard_layout.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

struct Settings {
  const char* ring_path = nullptr;           // CUDADIAG_RING: record here (none: fence only)
  std::uint32_t align = 16;                  // CUDADIAG_FENCE_ALIGN: pointer alignment, bytes
  ring::Side side = ring::Side::back;        // CUDADIAG_FENCE_SIDE: back | front | none
  fence::GuardMode guard = fence::GuardMode::scaled;  // CUDADIAG_GUARD: scaled | granule
  std::uint64_t quarantine_bytes = 1024ull << 20;  // CUDADIAG_FENCE_QUARANTINE_MB
  std::uint64_t reuse_bytes = 256ull << 20;  // CUDADIAG_FENCE_REUSE_MB: freed physical memory kept for reuse
  std::uint64_t recycle_bytes = 0;           // CUDADIAG_FENCE_RECYCLE_MB: freed buffers kept mapped (0: none)
  // CUDADIAG_RING_ALLOCATIONS / _LAUNCHES / _TMA_MAPS / _NAMES_KB / _SITES / _MODULES
  ring::Capacities limits = ring::kDefaultCapacities;
  bool debug = false;                        // CUDADIAG_FENCE_DEBUG=1: log to stderr

  // Variables whose value was rejected (name and value kept for the debug log).
  static constexpr int kMaxRejected = 8;
  const char* rejected_name[kMaxRejected] = {};
  const char* rejected_value[kMaxRejected] = {};
  int rejected = 0;
};

inline constexpr std::uint32_t kMaxAlign = 1u << 16;

using EnvLookup = const char* (*)(const char* name);

Settings read_settings(EnvLookup lookup) noexcept;

// Strict decimal parse of the whole text into [min, max]; false otherwise.
bool parse_unsigned(const char* text, std::uint64_t min, std::uint64_t max, std::uint64_t& out) noexcept;

}  // namespace cudadiag::interposer

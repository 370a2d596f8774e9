#pragma once
// Limits of the interposer's settings that `cudadiag run` passes through the environment
// (apps/interposer/settings.cpp reads them; lib/run/rungs.cpp sets them). The
// interposer cannot refuse a value (it runs inside the user's program and keeps its
// default for one it rejects), so the command line checks its options against the same
// limits and refuses what the interposer would not honour. Pure C++17, no library.
#include <cstdint>

namespace cudadiag::fence {

// CUDADIAG_FENCE_QUARANTINE_MB / --fence-quarantine-mb: address space (MiB) kept reserved
// for freed fenced buffers. 2^24 MiB = 16 TiB, a quarter of a 47-bit GPU address space.
inline constexpr std::uint64_t kMaxQuarantineMb = 1ull << 24;

// CUDADIAG_FENCE_REUSE_MB: freed physical memory (MiB) kept for reuse.
inline constexpr std::uint64_t kMaxReuseMb = 1ull << 24;

// CUDADIAG_FENCE_RECYCLE_MB: freed fenced buffers (MiB of mapped memory) kept mapped for
// the next allocation of their mapped size.
inline constexpr std::uint64_t kMaxRecycleMb = 1ull << 24;

}  // namespace cudadiag::fence

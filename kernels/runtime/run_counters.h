#pragma once
// What the device-side check of one run writes, read back by the host once per run.
// Plain C++: the check kernels (kernels/faults, kernels/attention) fill it with atomics,
// the host judges it (lib/attention for attention, kernels/faults for the catalog).
#include <cstdint>

namespace cudadiag::gpu {

// No mismatch recorded (first_bad, first_bad_row).
inline constexpr unsigned long long kNoIndex = ~0ull;

struct RunCounters {
  unsigned long long checked = 0;         // output elements compared
  unsigned long long mismatches = 0;      // faults: bits differ; attention: output not finite
  // Smallest bad element index in the high 32 bits, the bits found there in the low 32
  // (an atomicMin keeps both together); kNoIndex when none.
  unsigned long long first_bad = kNoIndex;
  unsigned long long bad_rows = 0;        // attention: rows far above the tolerance
  unsigned long long first_bad_row = kNoIndex;
  unsigned long long ref_non_finite = 0;  // attention: reference elements not finite
  double diff2 = 0.0;                     // attention: sum of (out - ref)^2 over finite outputs
  double ref2 = 0.0;                      // attention: sum of ref^2 over the same elements
  unsigned long long arrived = 0;         // 1 once the counters came back to the host
};

inline constexpr long long first_bad_index(const RunCounters& c) {
  return c.first_bad == kNoIndex ? -1 : static_cast<long long>(c.first_bad >> 32);
}
inline constexpr uint32_t first_bad_bits(const RunCounters& c) { return static_cast<uint32_t>(c.first_bad); }

}  // namespace cudadiag::gpu

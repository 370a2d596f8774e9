#pragma once
// Host helpers shared by the reproducers (internal to kernels/faults).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/faults/faults.h"

namespace cudadiag::faults {

constexpr unsigned kThreads = 256;

inline unsigned blocks_for(long long n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Fresh random inputs in [-8, 8): never zeros, so a kernel that writes nothing is caught.
inline std::vector<float> random_floats(long long n, unsigned long long seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    x = dist(rng);
    if (x == 0.0f) x = 1.0f;
  }
  return v;
}

// Compares got[i] with want(i) for i in [first, last), bit-exactly.
template <typename Want>
void compare_range(FaultRun& run, const std::vector<float>& got, long long first, long long last, Want want) {
  for (long long i = first; i < last; ++i) {
    const float w = want(i);
    ++run.checked;
    if (got[static_cast<size_t>(i)] != w) {
      if (run.mismatches == 0) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "out[%lld]: got %.9g, expected %.9g", i,
                      static_cast<double>(got[static_cast<size_t>(i)]), static_cast<double>(w));
        run.first_bad = buf;
      }
      ++run.mismatches;
    }
  }
}

}  // namespace cudadiag::faults

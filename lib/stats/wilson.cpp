#include "stats/wilson.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cudadiag::stats {

Interval wilson_interval(int successes, int trials, double z) {
  if (trials < 0 || successes < 0 || successes > trials)
    throw std::invalid_argument("wilson_interval: need 0 <= successes <= trials, got " +
                                std::to_string(successes) + " of " + std::to_string(trials));
  if (trials == 0) return {0.0, 1.0};
  const double n = trials;
  const double p = successes / n;
  const double z2 = z * z;
  const double denom = 1.0 + z2 / n;
  const double centre = (p + z2 / (2.0 * n)) / denom;
  const double half = z * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom;
  // At 0 and n the bound is exactly 0 or 1; clamp rounding noise.
  Interval out{std::max(0.0, centre - half), std::min(1.0, centre + half)};
  if (successes == 0) out.low = 0.0;
  if (successes == trials) out.high = 1.0;
  return out;
}

}  // namespace cudadiag::stats

#pragma once
// Wilson score interval for a binomial proportion: unlike the normal approximation
// it stays inside [0, 1] and is informative at 0 or n failures out of n runs.
namespace cudadiag::stats {

struct Interval {
  double low = 0.0;
  double high = 0.0;
};

// 95% interval (z = 1.959964) for `successes` out of `trials`. trials == 0 gives
// [0, 1] (nothing is known). Throws std::invalid_argument for negative counts or
// successes > trials.
Interval wilson_interval(int successes, int trials, double z = 1.959963984540054);

}  // namespace cudadiag::stats

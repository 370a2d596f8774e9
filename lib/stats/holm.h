#pragma once
// Holm–Bonferroni: which of several p-values are significant when a family of m
// hypotheses is tested at once, keeping the chance of any false finding at alpha.
// Sorted ascending, the j-th smallest p (1-based) is held to alpha / (m - j + 1), and
// the first one that misses its level stops the procedure: it and every larger p are
// not significant. Uniformly more powerful than plain Bonferroni (alpha / m for all).
#include <cstddef>
#include <vector>

namespace cudadiag::stats {

struct HolmDecision {
  double level = 0.0;        // the level this p-value was held to: alpha / (m - rank + 1)
  bool significant = false;  // p < level, and every smaller p was significant too
};

// `p` holds the p-values of the hypotheses that were tested; `family` is the size of
// the family they belong to (m >= p.size(): hypotheses that were not tested count, as
// p-values of 1). Decisions come back in the order of `p`. Ties keep their input order.
// Throws std::invalid_argument when family < p.size(), alpha is outside (0, 1) or a p is
// outside [0, 1] (NaN included).
std::vector<HolmDecision> holm(const std::vector<double>& p, std::size_t family, double alpha);

}  // namespace cudadiag::stats

#pragma once
// Fisher's exact test on a 2x2 table of repeat counts: did two hosts fail a case at
// different rates, or is the difference what chance gives with this many runs?
// Exact hypergeometric probabilities, summed in log space so that counts in the
// hundreds (or thousands) neither overflow nor lose precision.

namespace cudadiag::stats {

struct FisherResult {
  double p_two_sided = 1.0;  // probability of a table at least as extreme as the observed one
  double p_less = 1.0;       // one-sided: A fails less often than B
  double p_greater = 1.0;    // one-sided: A fails more often than B
};

// failures_a of runs_a on host A against failures_b of runs_b on host B.
// Throws std::invalid_argument when a count is negative or failures exceed runs.
// Two empty samples give p = 1 (no evidence either way).
FisherResult fisher_exact(int failures_a, int runs_a, int failures_b, int runs_b);

// Shorthand for fisher_exact(...).p_two_sided.
double fisher_two_sided(int failures_a, int runs_a, int failures_b, int runs_b);

// Natural log of the binomial coefficient n over k (k in [0, n]).
double log_choose(int n, int k);

}  // namespace cudadiag::stats

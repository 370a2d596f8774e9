#include "stats/fisher.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudadiag::stats {
namespace {

// Tables whose probability is within this relative distance of the observed one count
// as "as extreme": floating-point noise must not drop the observed table's twins.
constexpr double kRelativeTolerance = 1e-7;

void check_counts(int failures, int runs, const char* which) {
  if (runs < 0 || failures < 0 || failures > runs) {
    throw std::invalid_argument(std::string("fisher_exact: host ") + which + " has " +
                                std::to_string(failures) + " failures of " + std::to_string(runs) +
                                " runs (need 0 <= failures <= runs)");
  }
}

// exp(log_p) summed with the largest term factored out (log-sum-exp), capped at 1.
double sum_probabilities(const std::vector<double>& log_ps) {
  if (log_ps.empty()) return 0.0;
  const double top = *std::max_element(log_ps.begin(), log_ps.end());
  double s = 0.0;
  for (double lp : log_ps) s += std::exp(lp - top);
  return std::min(1.0, std::exp(top) * s);
}

}  // namespace

double log_choose(int n, int k) {
  if (k < 0 || k > n) throw std::invalid_argument("log_choose: k outside [0, n]");
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

FisherResult fisher_exact(int failures_a, int runs_a, int failures_b, int runs_b) {
  check_counts(failures_a, runs_a, "A");
  check_counts(failures_b, runs_b, "B");
  FisherResult out;
  const int total = runs_a + runs_b;
  const int failures = failures_a + failures_b;
  if (total == 0 || failures == 0 || failures == total) return out;  // nothing can differ

  // With the margins fixed, the failures on A follow a hypergeometric distribution.
  const int lo = std::max(0, failures - runs_b);
  const int hi = std::min(runs_a, failures);
  const double log_denominator = log_choose(total, failures);
  auto log_p = [&](int x) {
    return log_choose(runs_a, x) + log_choose(runs_b, failures - x) - log_denominator;
  };

  const double observed = log_p(failures_a);
  const double threshold = observed + std::log1p(kRelativeTolerance);
  std::vector<double> two_sided, less, greater;
  for (int x = lo; x <= hi; ++x) {
    const double lp = log_p(x);
    if (lp <= threshold) two_sided.push_back(lp);
    if (x <= failures_a) less.push_back(lp);
    if (x >= failures_a) greater.push_back(lp);
  }
  out.p_two_sided = sum_probabilities(two_sided);
  out.p_less = sum_probabilities(less);
  out.p_greater = sum_probabilities(greater);
  return out;
}

double fisher_two_sided(int failures_a, int runs_a, int failures_b, int runs_b) {
  return fisher_exact(failures_a, runs_a, failures_b, runs_b).p_two_sided;
}

}  // namespace cudadiag::stats

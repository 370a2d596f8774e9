#include "stats/holm.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace cudadiag::stats {

std::vector<HolmDecision> holm(const std::vector<double>& p, std::size_t family, double alpha) {
  if (family < p.size()) throw std::invalid_argument("holm: the family is smaller than the tests in it");
  if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument("holm: alpha must lie in (0, 1)");
  for (const double v : p)
    if (!(v >= 0.0 && v <= 1.0)) throw std::invalid_argument("holm: a p-value outside [0, 1]");
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<HolmDecision> out(p.size());
  bool rejecting = true;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    auto& d = out[order[rank]];
    d.level = alpha / static_cast<double>(family - rank);
    rejecting = rejecting && p[order[rank]] < d.level;
    d.significant = rejecting;
  }
  return out;
}

}  // namespace cudadiag::stats

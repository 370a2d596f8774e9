#include "stats/rate_text.h"

#include <cstdio>
#include <cstdlib>

namespace cudadiag::stats {
namespace {

// The number part of a percentage, without the sign.
std::string percent_number(double proportion) {
  const double p = 100.0 * proportion;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", p);
  // As few decimals as keep a value that is neither 0 nor 100 from reading as one.
  for (int decimals = 1; decimals <= 4 && p > 0.0 && p < 100.0; ++decimals) {
    const double shown = std::atof(buf);
    if (shown != 0.0 && shown != 100.0) break;
    std::snprintf(buf, sizeof buf, "%.*f", decimals, p);
  }
  return buf;
}

}  // namespace

std::string percent_text(double proportion) { return percent_number(proportion) + "%"; }

std::string interval_text(Interval ci) {
  return "95% CI " + percent_number(ci.low) + "-" + percent_number(ci.high) + "%";
}

std::string rate_text(int failures, int runs, Interval ci) {
  const double rate = runs > 0 ? static_cast<double>(failures) / runs : 0.0;
  return std::to_string(failures) + "/" + std::to_string(runs) + " failed (" + percent_text(rate) + ", " +
         interval_text(ci) + ")";
}

}  // namespace cudadiag::stats

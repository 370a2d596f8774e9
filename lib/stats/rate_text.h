#pragma once
// One way to print a failure rate and its 95% Wilson interval, for every view that says
// one (run's verdict notes, a result's repeats, compare): "3/10 failed (30%, 95% CI
// 11-60%)". Percentages are whole numbers; a value that is neither 0 nor 100 but would
// round to one of them keeps one decimal (0.4%, 99.6%), so "0%" and "100%" mean exactly.
#include <string>

#include "stats/wilson.h"

namespace cudadiag::stats {

// A proportion in [0, 1] as a percentage: "30%", "0.4%", "100%".
std::string percent_text(double proportion);

// "95% CI 11-60%".
std::string interval_text(Interval ci);

// "3/10 failed (30%, 95% CI 11-60%)".
std::string rate_text(int failures, int runs, Interval ci);

}  // namespace cudadiag::stats

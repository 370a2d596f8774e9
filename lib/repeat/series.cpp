#include "repeat/series.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "stats/wilson.h"

namespace cudadiag::repeat {

Series::Series(int runs, std::optional<SeedRequest> request, std::uint64_t fresh_base, int max_batch)
    : planned_(std::max(1, runs)),
      replay_(request && request->kind == SeedRequest::Kind::replay),
      base_(request ? request->value : fresh_base),
      max_batch_(std::max(1, max_batch)) {
  if (replay_) planned_ = 1;
}

std::uint64_t Series::seed_of(int run) const {
  return replay_ ? base_ : series_seed(base_, static_cast<std::uint64_t>(run));
}

std::vector<std::uint64_t> Series::next_batch() {
  std::vector<std::uint64_t> seeds;
  if (finished()) return seeds;
  const int n = std::min(batch_, planned_ - recorded_);
  seeds.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) seeds.push_back(seed_of(recorded_ + i));
  batch_ = std::min(batch_ * 2, max_batch_);
  return seeds;
}

RunRef Series::record(report::Outcome outcome) {
  if (finished()) throw std::logic_error("repeat series: a run recorded past the end of the series");
  const RunRef run{recorded_, seed_of(recorded_)};
  ++recorded_;
  ++counts_[outcome];
  if (outcome != report::Outcome::ok && !first_failure_) first_failure_ = run;
  last_ = run;
  return run;
}

RunRef Series::record_error(bool sticky) {
  const RunRef run = record(report::Outcome::cuda_error);
  if (!first_error_) first_error_ = run;
  if (sticky) stop();
  return run;
}

report::RepeatStats repeat_stats(const std::map<std::string, int>& histogram, int failures, double seconds) {
  report::RepeatStats s;
  for (const auto& [outcome, n] : histogram) s.runs += n;
  s.histogram = histogram;
  s.failures = failures;
  s.failure_rate = s.runs ? static_cast<double>(failures) / s.runs : 0.0;
  const auto ci = stats::wilson_interval(failures, s.runs);
  s.ci_low = ci.low;
  s.ci_high = ci.high;
  if (seconds > 0) {
    s.seconds = seconds;
    s.runs_per_second = s.runs / seconds;
  }
  return s;
}

report::RepeatStats Series::stats(double seconds) const {
  std::map<std::string, int> histogram;
  int failures = 0;
  for (const auto& [outcome, n] : counts_) {
    histogram[std::string(report::to_string(outcome))] = n;
    if (outcome != report::Outcome::ok) failures += n;
  }
  return repeat_stats(histogram, failures, seconds);
}

}  // namespace cudadiag::repeat

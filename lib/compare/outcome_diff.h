#pragma once
// Outcome diff: per paired case, how each host fared, whether that differs, and
// whether a difference in failure rates is more than chance (Fisher's exact test).
// A few reports are tested pair by pair; a fleet tests each failing host against all
// the others, Bonferroni-corrected for the number of hosts.
#include <optional>
#include <string>
#include <vector>

#include "compare/pairing.h"

namespace cudadiag::compare {

struct CompareOptions {
  double time_factor = 2.0;   // timings differing by more than this factor become notes
  double min_time_ms = 1.0;   // shorter durations are noise, never compared
  double alpha = 0.05;        // significance level of the rate tests
};

// One host's view of one paired case.
struct HostRun {
  const ResultDigest* result = nullptr;  // nullptr: the report lacks this case
  int runs = 0;       // repeats.runs, or 1 for a single run
  int failures = 0;   // repeats.failures, or 0/1 from the outcome
  bool repeated = false;  // runs came from repeat statistics
  bool present() const { return result != nullptr; }
  double rate() const { return runs > 0 ? static_cast<double>(failures) / runs : 0.0; }
};

// True when a result counts as a failure: a judged result that missed its
// expectation, or an unjudged one whose outcome is an error, a mismatch, a crash...
bool is_failure(const ResultDigest& r);

// "cuda_error 700 cudaErrorIllegalAddress (3/50 failed)"
std::string describe(const HostRun& h);
// "cuda_error 700": what majorities and groups compare.
std::string outcome_state(const HostRun& h);

struct RateTest {
  std::size_t a = 0, b = 0;  // report indices; b is unused when against_rest
  bool against_rest = false; // a against every other host, pooled
  int failures_a = 0, runs_a = 0, failures_b = 0, runs_b = 0;
  double p = 1.0;
  double alpha = 0.05;       // the level p was held to (Bonferroni-corrected against the rest)
  bool significant = false;
};

// What a paired case says about the hosts.
enum class CaseKind {
  agree,           // every host shows the same thing
  host_specific,   // fails (or fails differently) only on some hosts
  flaky,           // fails at a rate, with no significant difference between hosts
  common_failure,  // fails the same way on every host: the code or the configuration
};
const char* to_string(CaseKind k);

struct CaseAnalysis {
  PairKey key;
  std::vector<HostRun> hosts;          // per report
  CaseKind kind = CaseKind::agree;
  std::vector<std::size_t> failing;    // reports where it fails (host_specific / flaky)
  std::vector<std::size_t> passing;    // reports where it passes
  bool outcome_differs = false;
  bool error_differs = false;
  std::vector<RateTest> rate_tests;
  std::string explanation;             // one sentence for reasons and tables
};

struct OutcomeDiff {
  std::vector<CaseAnalysis> cases;  // cases present in at least two reports
  std::vector<std::string> notes;   // timing notes, underpowered tests, single runs
};

// `labels` name the reports in explanations.
OutcomeDiff diff_outcomes(const Pairing& pairing, const std::vector<std::string>& labels,
                          const CompareOptions& options);

}  // namespace cudadiag::compare

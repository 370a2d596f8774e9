#pragma once
// Outcome diff: per paired case, how each host fared against the case's expectation,
// whether that differs between hosts, and whether a difference in rates is more than
// chance (Fisher's exact test, Holm-corrected for the number of cases compared).
//
// A host's result is judged by its own expectation: a case that meets it on every host
// is never a difference, whatever the outcomes or the counts a build records. What
// rate tests count is the runs that missed the expectation (every failed run when the
// case has none). A case expected to fail at a rate (a race injection, "ok|mismatch",
// met) keeps its raw rates as a note: they depend on the GPU and its clocks. Only a host
// where that failure never shows, significantly, is named. A few reports are tested
// pair by pair; a fleet tests each failing host against all the others (Bonferroni over
// the hosts inside a case).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/pairing.h"

namespace cudadiag::compare {

struct CompareOptions {
  double time_factor = 2.0;   // per-run kernel times differing by more than this become notes
  // Timing notes compare the repeats' in-child time (repeats.seconds), never a result's
  // duration_ms (process and context start): only where both sides timed at least this
  // many runs, for at least this many seconds in all.
  int min_timed_runs = 20;
  double min_timed_seconds = 0.01;
  double alpha = 0.05;        // significance level of the rate tests, for the whole comparison
};

// How a host's result stands against its expectation.
enum class Judgement : std::uint8_t {
  met,       // expectation_met: true
  unmet,     // expectation_met: false
  unjudged,  // no expectation (or none recorded)
  skipped,   // did not run: nothing to compare
};

// One host's view of one paired case.
struct HostRun {
  const ResultDigest* result = nullptr;  // nullptr: the report lacks this case
  Judgement judgement = Judgement::unjudged;
  int runs = 0;       // repeats.runs; 1 without repeat statistics (one outcome seen)
  int failures = 0;   // runs that were not ok: repeats.failures, or 0/1 from the outcome
  int misses = 0;     // runs that count against the host (miss_count)
  bool repeated = false;  // runs > 1, from repeat statistics
  bool present() const { return result != nullptr; }
  bool compared() const { return present() && judgement != Judgement::skipped; }
  double miss_rate() const { return runs > 0 ? static_cast<double>(misses) / runs : 0.0; }
  double failure_rate() const { return runs > 0 ? static_cast<double>(failures) / runs : 0.0; }
};

// Runs that count against a host: none where the expectation is met; where it is
// missed, the failed runs (or every run, when the outcome is not a failure: an error
// was expected and none came); without an expectation, the failed runs.
int miss_count(const ResultDigest& r, int runs, int failures);

// True when a result counts against its host: it missed its expectation, or it has
// none and its outcome is an error, a mismatch, a crash...
bool is_failure(const ResultDigest& r);

// "cuda_error 700 cudaErrorIllegalAddress (3/50 failed)"
std::string describe(const HostRun& h);
// "cuda_error 700": what majorities and groups compare.
std::string outcome_state(const HostRun& h);

// What a rate test counts.
enum class Counted : std::uint8_t {
  misses,    // runs that missed the expectation (failed runs without one)
  failures,  // runs where a failure expected at a rate showed (never-shows test)
};
const char* to_string(Counted c);

struct RateTest {
  std::size_t a = 0, b = 0;  // report indices; b is unused when against_rest
  bool against_rest = false; // a against every other host (the showing hosts for never-shows), pooled
  Counted counted = Counted::misses;
  int failures_a = 0, runs_a = 0, failures_b = 0, runs_b = 0;  // counted runs of runs
  double p = 1.0;
  double alpha = 0.05;       // the level p was held to: Holm's level for the case, over the tests in it
  bool significant = false;
};

// What a paired case says about the hosts.
enum class CaseKind {
  agree,           // every host shows the same thing, or meets its expectation
  host_specific,   // fails (or fails differently, or never shows its expected failure) only on some hosts
  flaky,           // fails at a rate, with no significant difference between hosts
  common_failure,  // fails the same way on every host: the code or the configuration
};
const char* to_string(CaseKind k);
// The kind a comparison section names ("host_specific", ...); nullopt for another word.
std::optional<CaseKind> parse_case_kind(std::string_view text);

struct CaseAnalysis {
  PairKey key;
  std::vector<HostRun> hosts;          // per report
  CaseKind kind = CaseKind::agree;
  std::vector<std::size_t> failing;    // reports where it fails (host_specific / flaky)
  std::vector<std::size_t> passing;    // reports where it passes
  bool outcome_differs = false;
  bool error_differs = false;
  bool site_differs = false;           // two hosts' core dumps name another exception, kernel or line
  bool judged = false;                 // some host judged it against an expectation
  bool expected_rate = false;          // met everywhere, and failing at a rate somewhere
  std::vector<RateTest> rate_tests;
  std::string explanation;             // one sentence for reasons and tables
};

struct OutcomeDiff {
  std::vector<CaseAnalysis> cases;  // cases present in at least two reports
  std::size_t cases_compared = 0;   // cases with two or more hosts that ran them: Holm's family
  std::vector<std::string> notes;   // rates of expected-rate cases, timing notes, single runs
};

// `labels` name the reports in explanations.
OutcomeDiff diff_outcomes(const Pairing& pairing, const std::vector<std::string>& labels,
                          const CompareOptions& options);

}  // namespace cudadiag::compare

#pragma once
// From the diffs to a verdict: which environment differences line up with the
// host-specific failures (suspects, ranked), what makes the comparison weaker
// (config mismatch), and, with three or more hosts, the majority baseline. With a
// fleet (host_list.h), sentences name hosts by count and example, never all of them.
#include <string>
#include <vector>

#include "compare/env_fields.h"
#include "compare/outcome_diff.h"

namespace cudadiag::compare {

struct Suspect {
  std::string field;
  std::string category;
  int score = 0;
  std::vector<std::size_t> failing;  // reports where the cases fail
  std::vector<std::size_t> passing;
  std::vector<std::string> cases;    // labels of the host-specific cases it lines up with
  std::string why;
};

// Environment rows whose values on the failing hosts never occur on the passing
// hosts, for every host-specific case; ranked by field weight, with a boost when a
// health counter (ECC errors, retired pages, remapped rows) is higher where it fails.
std::vector<Suspect> rank_suspects(const std::vector<EnvRow>& env, const OutcomeDiff& outcomes,
                                   const std::vector<std::string>& labels);

// Reasons the comparison is weaker.
struct Weaknesses {
  // Other suites or commands, results that could not be paired, parameters that differ,
  // GPU parts that did not run: a config mismatch when nothing else is found.
  std::vector<std::string> mismatch;
  // Reports of different cudadiag builds (tool version, git revision, toolkit, schema
  // version): fleets are upgraded node by node, so this is said, never a finding. Cases
  // that pair only in one build (a suite that changed with the build) are said here too.
  std::vector<std::string> builds;
};
Weaknesses config_weaknesses(const std::vector<ReportDigest>& reports, const std::vector<EnvRow>& env,
                             const Pairing& pairing, const OutcomeDiff& outcomes);

struct BaselineCase {
  std::string case_label;
  std::string baseline;  // the outcome most hosts show
  std::size_t agreeing = 0;
  std::vector<std::pair<std::size_t, std::string>> outliers;  // report, its outcome
};

struct Outlier {
  std::size_t report = 0;
  std::vector<std::string> cases;        // cases where it differs from the baseline
  std::vector<std::string> environment;  // fields where it differs from the majority value
};

struct Baseline {
  bool applies = false;  // three or more reports
  std::vector<BaselineCase> cases;  // only cases with outliers
  std::vector<Outlier> outliers;
};

Baseline majority_baseline(const std::vector<EnvRow>& env, const OutcomeDiff& outcomes,
                           std::size_t report_count);

// The value most reports record for a row, when more than half of those that record
// it agree; nullptr otherwise.
Text majority_value(const EnvRow& row);

// "575.57.08 (5 hosts: a, b, c and 2 more), 570.86.10 (1 host: x)": the values of a row
// among some reports, most common first. With a few reports: "a: 575.57.08, b: ...".
std::string values_text(const EnvRow& row, const std::vector<std::size_t>& idx,
                        const std::vector<std::string>& labels);

struct VerdictParts {
  report::VerdictStatus status = report::VerdictStatus::same;  // same | host_specific | flaky | config_mismatch
  std::vector<std::string> reasons;
};

VerdictParts decide_verdict(const OutcomeDiff& outcomes, const std::vector<Suspect>& suspects,
                            const Weaknesses& weaknesses, const Baseline& baseline,
                            const std::vector<std::string>& labels);

}  // namespace cudadiag::compare

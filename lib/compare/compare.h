#pragma once
// `cudadiag compare`: the whole comparison of two or more reports, and the report it
// produces (command "compare", extra["comparison"], verdict). It works on digests
// (digest.h), so a fleet of thousands of reports compares in memory.
#include <string>
#include <vector>

#include "compare/digest.h"
#include "compare/env_fields.h"
#include "compare/groups.h"
#include "compare/load.h"
#include "compare/outcome_diff.h"
#include "compare/pairing.h"
#include "compare/verdict.h"

namespace cudadiag::compare {

struct Comparison {
  ReportSet set;  // the reports; everything below points into it
  std::vector<std::string> labels;
  std::vector<EnvRow> environment;  // every recorded field, differing or not
  Pairing pairing;
  OutcomeDiff outcomes;
  std::vector<Suspect> suspects;
  std::vector<std::string> weaknesses;          // config mismatch: other suites, commands, unpaired results
  std::vector<std::string> build_differences;   // other cudadiag builds: said, never a finding
  Baseline baseline;
  Grouping grouping;
  std::vector<std::string> notes;  // loader notes, timing notes, test caveats
  VerdictParts verdict;

  const std::vector<ReportDigest>& reports() const { return set.reports; }
};

// Labels the reports (label_digests) and runs every step. Needs two or more reports.
Comparison compare_digests(ReportSet set, const CompareOptions& options);

// Digests of loaded reports, labelled as label_reports labels them.
ReportSet digest_reports(const std::vector<LoadedReport>& reports);

// label_reports, digest_reports and compare_digests in one.
Comparison compare_reports(std::vector<LoadedReport>& reports, const CompareOptions& options);

// extra["comparison"]: {reports, environment_diff, environment_common, outcome_diff,
// unpaired, rate_tests, suspects, weaknesses, build_differences, notes, groups, environment_groups,
// group_tests, verdicts, baseline (3+ reports)}. Per-host values are keyed by label.
report::json comparison_json(const Comparison& c, const CompareOptions& options);

// A full report: new_report(argv, "compare"), no results, the comparison and the verdict.
report::Report comparison_report(const Comparison& c, const CompareOptions& options,
                                 const std::vector<std::string>& argv);


}  // namespace cudadiag::compare

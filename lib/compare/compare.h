#pragma once
// `cudadiag compare`: the whole comparison of two or more loaded reports, and the
// report it produces (command "compare", extra["comparison"], verdict).
#include <string>
#include <vector>

#include "compare/env_fields.h"
#include "compare/load.h"
#include "compare/outcome_diff.h"
#include "compare/pairing.h"
#include "compare/verdict.h"

namespace cudadiag::compare {

struct Comparison {
  std::vector<std::string> labels;
  std::vector<EnvRow> environment;  // every recorded field, differing or not
  Pairing pairing;
  OutcomeDiff outcomes;
  std::vector<Suspect> suspects;
  std::vector<std::string> weaknesses;
  Baseline baseline;
  std::vector<std::string> notes;  // loader notes, timing notes, test caveats
  VerdictParts verdict;
};

// Labels the reports (label_reports) and runs every step. Needs two or more reports.
Comparison compare_reports(std::vector<LoadedReport>& reports, const CompareOptions& options);

// extra["comparison"]: {reports, environment_diff, environment_common, outcome_diff,
// unpaired, rate_tests, suspects, weaknesses, notes, baseline (3+ reports)}.
report::json comparison_json(const std::vector<LoadedReport>& reports, const Comparison& c,
                             const CompareOptions& options);

// A full report: new_report(argv, "compare"), no results, the comparison and the verdict.
report::Report comparison_report(const std::vector<LoadedReport>& reports, const Comparison& c,
                                 const CompareOptions& options, const std::vector<std::string>& argv);


}  // namespace cudadiag::compare

#pragma once
// The report of a repro run: host and device facts, the results, the suite section
// (plan, devices, sanitizer), the GPU part's status and the verdict.
#include <string>
#include <vector>

#include "profiles/sanitizer_tool.h"
#include "report/report.h"
#include "suite/plan.h"
#include "suite/run_plan.h"
#include "suite/suite.h"

namespace cudadiag::suite {

// What the command decided before the suite ran, beyond the plan.
struct ReproFacts {
  bool wants_sanitizer = false;
  profiles::SanitizerTool sanitizer;
  int jobs = 1;
};

// `r`: the session's report as evidence::start_session_report began it.
report::Report repro_report(report::Report r, const Suite& s, const PlanOptions& popts, const Plan& plan,
                            SuiteOutcome outcome, const ReproFacts& facts);
// The same from the request the suite ran (repro_request.h).
struct Request;
report::Report repro_report(report::Report r, const Request& request, SuiteOutcome outcome);

}  // namespace cudadiag::suite

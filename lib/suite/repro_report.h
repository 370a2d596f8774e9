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

struct ReproFacts {
  std::vector<std::string> argv;
  char** envp = nullptr;
  report::json host = report::json::object();  // host::host_json()
  report::json nvml_snapshot = report::json::object();
  report::json devices = report::json::array();  // merged device views
  std::string no_gpu_reason;                     // from device selection
  bool wants_sanitizer = false;
  profiles::SanitizerTool sanitizer;
  int jobs = 1;
};

report::Report repro_report(const Suite& s, const PlanOptions& popts, const Plan& plan, SuiteOutcome outcome,
                            const ReproFacts& facts);

}  // namespace cudadiag::suite

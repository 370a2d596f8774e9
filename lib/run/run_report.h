#pragma once
// The report of a `cudadiag run`: the usual sections (host, driver, devices from NVML,
// the allowlisted environment), one result per rung (to_result.h: the run that shows the
// most, with the rung's repeat statistics), one skipped result per run the stop request
// cut short, the verdict, and a "run" section: the
// command, the plan, each rung's runs and rates, the fence (interposer, settings, what it
// saw), the sanitizer, the caching table, and whether the kernel log could be read.
#include <string>
#include <vector>

#include "profiles/sanitizer_tool.h"
#include "run/run_session.h"
#include "report/report.h"

namespace cudadiag::run {

struct RunFacts {
  std::vector<std::string> argv;  // cudadiag's own
  char** envp = nullptr;
  report::json host = report::json::object();           // host::host_json()
  report::json nvml_snapshot = report::json::object();  // host::nvml_snapshot()
  report::json devices = report::json::array();         // merged device views
  profiles::SanitizerTool sanitizer;                    // as looked up (found or why not)
};

report::Report run_report(const SessionOptions& opts, const SessionOutcome& outcome, const RunFacts& facts);

// The exit code of the command: the verdict's, or 1 when a stop request cut the session
// short (what finished is reported, the verdict may lack rungs).
int run_exit_code(const SessionOutcome& outcome);

}  // namespace cudadiag::run

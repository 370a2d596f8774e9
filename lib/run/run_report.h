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

// What the command found before the session ran, beyond the report's header.
struct RunFacts {
  std::string no_gpu_reason;          // evidence::gpu_unavailable: "" when CUDA can start on a listed GPU
  profiles::SanitizerTool sanitizer;  // as looked up (found or why not)
};

// `r`: the session's report as evidence::start_session_report began it (its environment
// section gains the allowlisted --env values).
report::Report run_report(report::Report r, const SessionOptions& opts, const SessionOutcome& outcome,
                          const RunFacts& facts);
// The same from the request the session ran (run_request.h).
struct Request;
report::Report run_report(report::Report r, const Request& request, const SessionOutcome& outcome);

}  // namespace cudadiag::run

#pragma once
// One case run in a child for the `fault` and `index-select` commands: the allocator and
// CUDA_LAUNCH_BLOCKING chosen by flags, the expectation for that setting, a site run
// when it faulted (suite/site_runs.h), fault bisection when the case faulted under a
// fence, the report and its verdict (naming the site).
#include <atomic>
#include <string>
#include <vector>

#include "cases/expectation.h"
#include "profiles/allocator.h"
#include "report/report.h"
#include "suite/case_protocol.h"

namespace cudadiag::suite {

struct SingleCaseOptions {
  std::string command;                 // report invocation.command
  std::string self_exe;                // the cudadiag binary
  std::vector<std::string> argv;       // invocation.argv
  char** envp = nullptr;               // for the report's environment allowlist
  bool blocking = false;
  bool bisect = true;
  int deadline_ms = 0;                 // 0: 60 s
  cases::Expectation expected;         // for this allocator and blocking (unjudged when empty)
  profiles::Allocator fence_side = profiles::Allocator::fence_back;  // the case's "fence" profile
  const std::atomic<bool>* stop = nullptr;  // the command's stop flag
  bool coredump = false;               // a failed case runs once more armed, for its site (site_runs.h)
};

// Runs spec (its allocator and repeat already set) and returns the finished report,
// without a verdict.
report::Report run_single_case(const CaseSpec& spec, const SingleCaseOptions& opts);

// `fault`: ok when the outcome is the one a healthy host gives for this setting,
// findings when not, no_gpu when the GPU part could not run.
report::Verdict expectation_verdict(const report::Report& rep);

// `index-select`: ok when the output matched the reference, findings for anything else
// (with whether a healthy host gives the same), no_gpu when the GPU part could not run.
report::Verdict output_verdict(const report::Report& rep, profiles::Allocator allocator);

}  // namespace cudadiag::suite

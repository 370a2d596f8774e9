#pragma once
// One case run in a child for the `fault` and `index-select` commands: the allocator
// and CUDA_LAUNCH_BLOCKING chosen by flags, the expectation for that setting, fault
// bisection when the case faulted under a fence allocator, and the report.
#include <string>

#include "cases/case_spec.h"
#include "report/report.h"

namespace cudadiag::app {

struct SingleCaseOptions {
  std::string command;          // report invocation.command
  std::string allocator = "pool";
  bool blocking = false;
  bool bisect = true;
  int deadline_ms = 0;          // 0: 60 s
  std::string expected;         // expectation expression for this allocator/blocking ("" unjudged)
  std::string fence_allocator = "fence-back";  // which fence side counts as the case's "fence" profile
};

// Runs spec (its allocator and repeat already set) and returns the finished report.
report::Report run_single_case(const cases::CaseSpec& spec, const SingleCaseOptions& opts);

// True when the GPU part could not run (no device, driver too old): the report's gpu
// section says so and the command exits 3.
bool gpu_unavailable(const report::Result& r);

}  // namespace cudadiag::app

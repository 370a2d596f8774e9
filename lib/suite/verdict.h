#pragma once
// The verdict of a repro run, from judged results:
//   healthy     every judged expectation met, everything ran
//   suspect     a known-good case failed, or a known-bad reproducer was not caught
//   incomplete  the GPU part (or some profile) could not run, or the run was interrupted
// suspect wins over incomplete: a finding stays a finding.
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::suite {

// One line naming the case, profile and device and what happened instead.
std::string unmet_reason(const report::Result& r);

report::Verdict decide_verdict(const std::vector<report::Result>& results, bool interrupted);

}  // namespace cudadiag::suite

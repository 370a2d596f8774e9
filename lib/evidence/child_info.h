#pragma once
// How a child ended, as the report records it (report::ChildInfo): the runner's decoded
// ending and the bounded stdout/stderr excerpts, made valid UTF-8 (a program's output may
// be any bytes; a report must never be lost to one of them). repro's children and run's
// rungs are recorded the same way.
#include "report/report.h"
#include "runner/runner.h"

namespace cudadiag::evidence {

report::ChildInfo child_info(const runner::ChildOutcome& o);

}  // namespace cudadiag::evidence

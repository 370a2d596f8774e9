#pragma once
// How a child ended, as the report records it (report::ChildInfo): the decoded ending
// and the bounded stdout/stderr excerpts, made valid UTF-8 (a program's output may be
// any bytes; a report must never be lost to one of them).
#include "report/report.h"
#include "runner/runner.h"

namespace cudadiag::runner {

report::ChildInfo child_info(const ChildOutcome& o);

}  // namespace cudadiag::runner

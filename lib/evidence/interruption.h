#pragma once
// A stop request (SIGINT, SIGTERM, SIGHUP) that cut a command short, recorded in one
// place for every command: invocation.interrupted, and one reason in the verdict saying
// that the results are the ones that finished.
#include <string>

#include "report/report.h"

namespace cudadiag::evidence {

enum class ReasonAt { front, back };

// Sets invocation.interrupted to `interrupted`; when it is true and `why` is not empty,
// adds `why` to the verdict's reasons unless one of them already says "interrupted...".
void record_interruption(report::Report& r, bool interrupted, const std::string& why = "",
                         ReasonAt at = ReasonAt::back);

}  // namespace cudadiag::evidence

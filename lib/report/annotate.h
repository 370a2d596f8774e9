#pragma once
// Fills class, sticky, meaning and next_step of an ErrorInfo from the taxonomy
// (by code and source; by name when the code is unknown). Unknown errors get class
// "unknown", sticky true (assume the worst) and a generic next step.
#include "report/report.h"

namespace cudadiag::report {

void annotate_error(ErrorInfo& e);

}  // namespace cudadiag::report

#pragma once
// A GPU that stands out inside one report: a run over several GPUs whose results differ
// on one of them (report/standout.h) is named in compare's verdict as in repro's, whatever
// the other reports show.
#include <string>
#include <vector>

#include "compare/digest.h"

namespace cudadiag::compare {

// "LABEL: GPU 1 stands out: 1 run(s) failed there and passed on the other GPUs: ..." for
// every such GPU of every report, in report order.
std::vector<std::string> standout_reasons(const std::vector<ReportDigest>& reports);

}  // namespace cudadiag::compare

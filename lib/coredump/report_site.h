#pragma once
// A fault site (coredump/fault_site.h) as the report carries it (report/fault_site.h).
#include "coredump/fault_site.h"
#include "report/fault_site.h"

namespace cudadiag::coredump {

report::FaultSite to_report_site(const FaultSite& s);

}  // namespace cudadiag::coredump

#pragma once
// Kernel-log Xid lines belong on the result of the child that caused them: after a
// child failed, the lines that name its pid (or, naming no pid, were logged while it
// ran) are attached to its failed results.
#include <cstdint>
#include <vector>

#include "host/xid.h"
#include "report/report.h"

namespace cudadiag::suite {

// An outcome worth explaining with the kernel log.
bool is_failed_outcome(const report::Result& r);

// Attaches to each failed result with a child pid the events attributed to that pid
// within [start_us, end_us] (CLOCK_MONOTONIC). Returns how many results got lines.
size_t attach_xid(std::vector<report::Result>& results, const std::vector<host::XidEvent>& events,
                  std::uint64_t start_us, std::uint64_t end_us);

}  // namespace cudadiag::suite

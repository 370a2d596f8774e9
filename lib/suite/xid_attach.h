#pragma once
// Kernel-log Xid lines on the results of the child that caused them, by the policy of
// evidence/kernel_log.h (the one `run` follows too): children run in parallel, so
// "logged while it ran" is not enough.
#include <cstdint>
#include <vector>

#include "evidence/kernel_log.h"
#include "host/xid.h"
#include "report/report.h"

namespace cudadiag::suite {

using evidence::ChildWindow;

// Attaches to each failed result (report::is_failure) with a child pid the events
// attributed to it (pid-less lines only to errors, report::is_error). `window` is this batch's run; `others` are every other child's runs known
// so far (running ones with end_us 0). Pid-less lines are matched within the window
// widened by slack_us (the driver logs a fault a little after the kernel ran).
// Returns how many results got lines.
size_t attach_xid(std::vector<report::Result>& results, const std::vector<host::XidEvent>& events,
                  const ChildWindow& window, const std::vector<ChildWindow>& others,
                  std::uint64_t slack_us = evidence::kXidSlackUs);

}  // namespace cudadiag::suite

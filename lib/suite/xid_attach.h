#pragma once
// Kernel-log Xid lines belong on the result of the child that caused them. Children run
// in parallel, so "logged while it ran" is not enough:
//  - a line that names a pid goes only to the results of the child with that pid;
//  - a line without a pid goes to a child only when that child raised a CUDA error (or
//    died) and no other child was running at the line's time;
//  - a child that ended without a CUDA error (ok, mismatch) gets only lines naming its pid.
#include <cstdint>
#include <vector>

#include "host/xid.h"
#include "report/report.h"

namespace cudadiag::suite {

// When a child ran, CLOCK_MONOTONIC microseconds; end_us 0: still running.
struct ChildWindow {
  int pid = 0;
  std::uint64_t start_us = 0;
  std::uint64_t end_us = 0;
};

// Attaches to each failed result (report::is_failure) with a child pid the events attributed to it by the
// rules above. `window` is this batch's run; `others` are every other child's runs known
// so far (running ones with end_us 0). Pid-less lines are matched within the window
// widened by slack_us (the driver logs a fault a little after the kernel ran).
// Returns how many results got lines.
size_t attach_xid(std::vector<report::Result>& results, const std::vector<host::XidEvent>& events,
                  const ChildWindow& window, const std::vector<ChildWindow>& others,
                  std::uint64_t slack_us = 500'000);

}  // namespace cudadiag::suite

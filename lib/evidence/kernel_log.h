#pragma once
// Kernel-log (Xid) lines belong to the child that caused them, by one policy for every
// command (repro's children run in parallel, run's one after another):
//  - a line that names a pid goes to the child with that pid (run: the pids of its
//    process tree the fence rings name too);
//  - a line without a pid goes to a child only when that child failed with an error or
//    died, was running at the line's time (its window widened by slack_us: the driver
//    logs a fault a little after the kernel ran) and no other child was;
//  - a child that ended without an error gets only the lines naming its pids.
#include <cstdint>
#include <vector>

#include "host/xid.h"

namespace cudadiag::evidence {

// When a child ran, CLOCK_MONOTONIC microseconds; end_us 0: still running.
struct ChildWindow {
  int pid = 0;
  std::uint64_t start_us = 0;
  std::uint64_t end_us = 0;
};

inline constexpr std::uint64_t kXidSlackUs = 500'000;

// The lines of one child, each once, in the log's order. `pids`: the child's (at least
// window.pid); `others`: every other child's window known (running ones with end_us 0);
// `errored`: the child failed with an error or died.
std::vector<host::XidEvent> xid_lines_of_child(const std::vector<host::XidEvent>& events, const std::vector<int>& pids,
                                               const ChildWindow& window, const std::vector<ChildWindow>& others,
                                               bool errored, std::uint64_t slack_us = kXidSlackUs);

}  // namespace cudadiag::evidence

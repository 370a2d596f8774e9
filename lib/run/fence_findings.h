#pragma once
// What a fenced run's log shows without a fault: writes into the alignment slack of a
// buffer (the interposer's canaries changed), and a launch whose driver call never
// returned when the run reached its deadline (under CUDA_LAUNCH_BLOCKING: a kernel that
// never finished, a GPU hang). Pure: plain data in, plain data out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run/allocation.h"
#include "run/symbolizer.h"

namespace cudadiag::run {

struct SlackFinding {
  SlackWriteRecord write;
  std::vector<std::string> kernels;  // kernels the log shows were passed the buffer, newest last
  std::string line;  // "a write 0 bytes past the end of allocation #3 (...), inside the alignment slack, seen at free; kernels passed #3: k"
  report::AllocationOrigin allocated_at;  // where the buffer was made (with `symbols`)
};
// With `symbols`, each finding says where its buffer was made (allocated_at, and in its line).
std::vector<SlackFinding> slack_findings(const InterposerLog& log, Symbolizer* symbols = nullptr);

struct HangFinding {
  std::string kernel;            // the launch that never returned
  std::uint64_t launch_seq = 0;
  std::string line;              // one line naming it
  // Filled by whoever can say where it spun (a GPU core dump taken at the deadline):
  // kernel, source line, block/thread. Empty: no such evidence.
  std::string dump_line;
};
// A run that reached its deadline: the newest launch of the log when its call never
// returned (launches of one process are recorded in order, and under
// CUDA_LAUNCH_BLOCKING each returns before the next starts).
std::optional<HangFinding> hang_finding(const InterposerLog& log);

}  // namespace cudadiag::run

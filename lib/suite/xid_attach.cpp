#include "suite/xid_attach.h"

namespace cudadiag::suite {

bool is_failed_outcome(const report::Result& r) {
  return r.outcome == "cuda_error" || r.outcome == "crashed" || r.outcome == "timeout" ||
         r.outcome == "no_result" || r.outcome == "mismatch";
}

size_t attach_xid(std::vector<report::Result>& results, const std::vector<host::XidEvent>& events,
                  std::uint64_t start_us, std::uint64_t end_us) {
  if (events.empty()) return 0;
  size_t n = 0;
  for (auto& r : results) {
    if (!is_failed_outcome(r) || !r.child || r.child->pid <= 0) continue;
    const auto mine = host::attribute_to_pid(events, r.child->pid, start_us, end_us);
    if (mine.empty()) continue;
    r.xid = host::to_json(mine);
    ++n;
  }
  return n;
}

}  // namespace cudadiag::suite

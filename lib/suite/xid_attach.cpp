#include "suite/xid_attach.h"

namespace cudadiag::suite {

size_t attach_xid(std::vector<report::Result>& results, const std::vector<host::XidEvent>& events,
                  const ChildWindow& window, const std::vector<ChildWindow>& others, std::uint64_t slack_us) {
  if (events.empty()) return 0;
  size_t n = 0;
  for (auto& r : results) {
    if (!report::is_failure(r.outcome) || !r.child || r.child->pid <= 0) continue;
    ChildWindow mine = window;
    mine.pid = r.child->pid;
    const auto attached =
        evidence::xid_lines_of_child(events, {mine.pid}, mine, others, report::is_error(r.outcome), slack_us);
    if (attached.empty()) continue;
    r.xid = host::to_xid_lines(attached);
    ++n;
  }
  return n;
}

}  // namespace cudadiag::suite

#include "suite/xid_attach.h"

namespace cudadiag::suite {

namespace {

bool covers(const ChildWindow& w, std::uint64_t t, std::uint64_t slack_us) {
  const std::uint64_t lo = w.start_us > slack_us ? w.start_us - slack_us : 0;
  if (t < lo) return false;
  return w.end_us == 0 || t <= w.end_us + slack_us;
}

// A pid-less line is this child's only when no other child could have logged it.
bool pidless_is_mine(const host::XidEvent& e, const ChildWindow& mine, const std::vector<ChildWindow>& others,
                     std::uint64_t slack_us) {
  if (!e.timestamp_us || !covers(mine, *e.timestamp_us, slack_us)) return false;
  for (const auto& o : others) {
    if (o.pid == mine.pid && o.start_us == mine.start_us) continue;
    if (covers(o, *e.timestamp_us, slack_us)) return false;
  }
  return true;
}

}  // namespace

size_t attach_xid(std::vector<report::Result>& results, const std::vector<host::XidEvent>& events,
                  const ChildWindow& window, const std::vector<ChildWindow>& others, std::uint64_t slack_us) {
  if (events.empty()) return 0;
  size_t n = 0;
  for (auto& r : results) {
    if (!report::is_failure(r.outcome) || !r.child || r.child->pid <= 0) continue;
    ChildWindow mine = window;
    mine.pid = r.child->pid;
    std::vector<host::XidEvent> attached;
    for (const auto& e : events) {
      if (e.pid) {
        if (*e.pid == r.child->pid) attached.push_back(e);
      } else if (report::is_error(r.outcome) && pidless_is_mine(e, mine, others, slack_us)) {
        attached.push_back(e);
      }
    }
    if (attached.empty()) continue;
    r.xid = host::to_xid_lines(attached);
    ++n;
  }
  return n;
}

}  // namespace cudadiag::suite

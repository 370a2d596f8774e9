#include "evidence/kernel_log.h"

#include <algorithm>
#include <set>
#include <string>

namespace cudadiag::evidence {
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

std::vector<host::XidEvent> xid_lines_of_child(const std::vector<host::XidEvent>& events, const std::vector<int>& pids,
                                               const ChildWindow& window, const std::vector<ChildWindow>& others,
                                               bool errored, std::uint64_t slack_us) {
  std::vector<host::XidEvent> out;
  std::set<std::string> seen;  // the log may hold a line twice (a cursor read again)
  for (const auto& e : events) {
    const bool mine = e.pid ? std::find(pids.begin(), pids.end(), *e.pid) != pids.end()
                            : errored && pidless_is_mine(e, window, others, slack_us);
    if (!mine) continue;
    if (!seen.insert((e.seq ? std::to_string(*e.seq) : std::string()) + "|" + e.raw).second) continue;
    out.push_back(e);
  }
  std::stable_sort(out.begin(), out.end(), [](const host::XidEvent& a, const host::XidEvent& b) {
    return a.seq.value_or(0) < b.seq.value_or(0);
  });
  return out;
}

}  // namespace cudadiag::evidence

#include "evidence/child_info.h"

#include "util/utf8.h"

namespace cudadiag::evidence {
namespace {

report::StreamExcerpt excerpt_of(const runner::Capture& c) {
  return report::StreamExcerpt{to_valid_utf8(c.text()), c.total_bytes, c.dropped_bytes};
}

}  // namespace

report::ChildInfo child_info(const runner::ChildOutcome& o) {
  report::ChildInfo c;
  c.pid = static_cast<int>(o.pid);
  c.ending = o.ending;
  c.exit_code = o.exit_code;
  c.signal = o.signal;
  c.signal_name = o.signal_name;
  c.killed_after_grace = o.killed_after_grace;
  c.stdout_excerpt = excerpt_of(o.out);
  c.stderr_excerpt = excerpt_of(o.err);
  for (const auto& s : o.strays) c.strays.push_back({static_cast<int>(s.pid), to_valid_utf8(s.command), s.note()});
  c.strays_unnamed = o.strays_unnamed;
  return c;
}

}  // namespace cudadiag::evidence

#include "evidence/interruption.h"

namespace cudadiag::evidence {

void record_interruption(report::Report& r, bool interrupted, const std::string& why, ReasonAt at) {
  r.invocation.interrupted = interrupted;
  if (!interrupted || why.empty()) return;
  auto& reasons = r.verdict.reasons;
  for (const auto& reason : reasons)
    if (reason.rfind("interrupted", 0) == 0) return;
  reasons.insert(at == ReasonAt::front ? reasons.begin() : reasons.end(), why);
}

}  // namespace cudadiag::evidence

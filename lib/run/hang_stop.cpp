#include "run/hang_stop.h"

#include "run/site_evidence.h"

namespace cudadiag::run {

std::string named_hang(const RunJudgement& j) {
  if (j.outcome != RunOutcome::timeout) return "";
  const report::FaultSite* w = waiting_site(j.sites);
  if (w == nullptr || w->waiting.empty()) return "";
  const auto& top = w->waiting.front();
  if ((top.kernel.empty() && top.function.empty()) || !top.line || top.file.empty()) return "";
  return report::waiting_line(*w);
}

std::string hang_stop_reason(const RunJudgement& j, const RunOptions& opts) {
  if (opts.rungs_asked) return "";
  const std::string hang = named_hang(j);
  if (hang.empty()) return "";
  return "the hang is named (" + hang + "): the rungs above it would only wait out their own deadlines to name it "
         "again (--rungs or --sanitize always runs them)";
}

}  // namespace cudadiag::run

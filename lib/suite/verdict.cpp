#include "suite/verdict.h"

#include <map>

#include "cases/expectation.h"

namespace cudadiag::suite {

std::string unmet_reason(const report::Result& r) {
  std::string where = r.case_id + " under " + r.profile;
  if (r.device.is_gpu()) where += " on " + r.device.uuid;
  std::string got(report::to_string(r.outcome));
  if (r.error) got += " (" + r.error->name + (r.error->code ? " " + std::to_string(r.error->code) : "") + ")";
  else if (!r.reason.empty()) got += " (" + r.reason + ")";
  bool known_good = false;
  try {
    known_good = cases::Expectation::parse(r.expected).accepts_clean();
  } catch (const std::exception&) {
  }
  if (known_good) return "known-good case " + where + " failed: " + got + ", expected " + r.expected;
  return "known-bad case " + where + " was not caught: " + got + ", expected " + r.expected;
}

report::Verdict decide_verdict(const std::vector<report::Result>& results, bool interrupted) {
  report::Verdict v;
  std::vector<std::string> unmet;
  std::map<std::string, int> skip_reasons;
  for (const auto& r : results) {
    if (r.expectation_met.has_value() && !*r.expectation_met) unmet.push_back(unmet_reason(r));
    if (r.outcome == report::Outcome::skipped) ++skip_reasons[r.reason.empty() ? "skipped" : r.reason];
  }
  if (!unmet.empty()) {
    v.status = report::VerdictStatus::suspect;
    v.reasons = unmet;
  } else if (interrupted || !skip_reasons.empty()) {
    v.status = report::VerdictStatus::incomplete;
  } else {
    v.status = report::VerdictStatus::healthy;
  }
  if (interrupted) v.reasons.push_back("interrupted: results so far only");
  for (const auto& [reason, n] : skip_reasons) v.reasons.push_back(std::to_string(n) + " run(s) skipped: " + reason);
  return v;
}

}  // namespace cudadiag::suite

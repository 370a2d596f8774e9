#include "suite/verdict.h"

#include <map>

#include "cases/expectation.h"
#include "util/exit_codes.h"

namespace cudadiag::suite {

bool is_known_good(const std::string& expectation) {
  report::Result clean;
  clean.outcome = "ok";
  try {
    const auto e = cases::Expectation::parse(expectation);
    return e.empty() || e.matches(clean);
  } catch (const std::exception&) {
    return false;
  }
}

std::string unmet_reason(const report::Result& r) {
  std::string where = r.case_id + " under " + r.profile;
  if (!r.device.empty() && r.device != "host") where += " on " + r.device;
  std::string got = r.outcome;
  if (r.error) got += " (" + r.error->name + (r.error->code ? " " + std::to_string(r.error->code) : "") + ")";
  else if (!r.reason.empty()) got += " (" + r.reason + ")";
  if (is_known_good(r.expected))
    return "known-good case " + where + " failed: " + got + ", expected " + r.expected;
  return "known-bad case " + where + " was not caught: " + got + ", expected " + r.expected;
}

report::Verdict decide_verdict(const std::vector<report::Result>& results, bool interrupted) {
  report::Verdict v;
  std::vector<std::string> unmet;
  std::map<std::string, int> skip_reasons;
  for (const auto& r : results) {
    if (r.expectation_met.has_value() && !*r.expectation_met) unmet.push_back(unmet_reason(r));
    if (r.outcome == "skipped") ++skip_reasons[r.reason.empty() ? "skipped" : r.reason];
  }
  if (!unmet.empty()) {
    v.status = "suspect";
    v.reasons = unmet;
  } else if (interrupted || !skip_reasons.empty()) {
    v.status = "incomplete";
  } else {
    v.status = "healthy";
  }
  if (interrupted) v.reasons.push_back("interrupted: results so far only");
  for (const auto& [reason, n] : skip_reasons)
    v.reasons.push_back(std::to_string(n) + " run(s) skipped: " + reason);
  return v;
}

int exit_code_for(const report::Verdict& v, bool interrupted) {
  if (v.status == "healthy") return kExitOk;
  if (v.status == "suspect" || interrupted) return kExitFindings;
  return kExitEnvironment;
}

}  // namespace cudadiag::suite

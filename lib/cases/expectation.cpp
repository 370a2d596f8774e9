#include "cases/expectation.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace cudadiag::cases {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool matches_one(const std::string& alt, const report::Result& r) {
  if (alt == "any") return true;
  if (alt == "silent") return r.outcome == "ok" || r.outcome == "mismatch";
  if (alt == "error") return r.outcome == "cuda_error";
  if (alt.rfind("error:", 0) == 0) {
    if (r.outcome != "cuda_error" || !r.error) return false;
    const std::string what = alt.substr(6);
    if (all_digits(what)) return r.error->code == std::stoi(what);
    return r.error->error_class == what;
  }
  return r.outcome == alt;
}

}  // namespace

const std::vector<std::string>& outcome_names() {
  static const std::vector<std::string> names = {
      "ok",      "mismatch", "cuda_error", "invalid_config", "timeout",         "crashed",
      "no_result", "skipped", "host_valid", "host_invalid",  "driver_disagrees"};
  return names;
}

bool is_outcome(const std::string& name) {
  const auto& n = outcome_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

Expectation Expectation::parse(const std::string& text) {
  Expectation e;
  e.text_ = trim(text);
  if (e.text_.empty()) return e;
  std::stringstream ss(e.text_);
  std::string part;
  while (std::getline(ss, part, '|')) {
    const std::string alt = trim(part);
    bool ok = alt == "any" || alt == "silent" || alt == "error" || is_outcome(alt);
    if (!ok && alt.rfind("error:", 0) == 0 && alt.size() > 6) {
      const std::string what = alt.substr(6);
      ok = all_digits(what) ||
           std::all_of(what.begin(), what.end(), [](unsigned char c) { return std::islower(c) || c == '_'; });
    }
    if (!ok) {
      throw std::invalid_argument("unknown expectation '" + alt +
                                  "' (expected an outcome, silent, error, error:<class>, "
                                  "error:<code> or any)");
    }
    e.alternatives_.push_back(alt);
  }
  return e;
}

bool Expectation::matches(const report::Result& r) const {
  return std::any_of(alternatives_.begin(), alternatives_.end(),
                     [&](const std::string& alt) { return matches_one(alt, r); });
}

void judge(report::Result& r, const std::string& expected) {
  r.expected = expected;
  const auto e = Expectation::parse(expected);
  if (e.empty() || expected == "any") {
    r.expectation_met.reset();
    return;
  }
  r.expectation_met = e.matches(r);
}

}  // namespace cudadiag::cases

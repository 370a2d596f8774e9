#include "cases/expectation.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "taxonomy/taxonomy.h"

namespace cudadiag::cases {
namespace {

using report::Outcome;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool is_class_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::islower(c) || c == '_'; });
}

// An error class leaves the context usable when the taxonomy knows it and none of its
// errors is sticky (invalid_value, launch_config: yes; memory_fault: no).
bool class_keeps_context(std::optional<taxonomy::ErrorClass> error_class) {
  if (!error_class) return false;
  for (const auto& e : taxonomy::all())
    if (e.error_class == *error_class && e.sticky) return false;
  return true;
}

}  // namespace

bool Expectation::Alternative::matches(const report::Result& r) const {
  switch (kind) {
    case Kind::any: return true;
    case Kind::outcome: return r.outcome == outcome;
    case Kind::silent: return r.outcome == Outcome::ok || r.outcome == Outcome::mismatch;
    case Kind::any_error: return r.outcome == Outcome::cuda_error;
    case Kind::error_class: return r.outcome == Outcome::cuda_error && r.error && error_class &&
                                   r.error->error_class == *error_class;
    case Kind::error_code: return r.outcome == Outcome::cuda_error && r.error && r.error->code == code;
  }
  return false;
}

Expectation Expectation::parse(const std::string& text) {
  Expectation e;
  e.text_ = trim(text);
  if (e.text_.empty()) return e;
  std::stringstream ss(e.text_);
  std::string part;
  while (std::getline(ss, part, '|')) {
    const std::string alt = trim(part);
    Alternative a;
    using Kind = Alternative::Kind;
    if (alt == "any") {
      a.kind = Kind::any;
    } else if (alt == "silent") {
      a.kind = Kind::silent;
    } else if (alt == "error") {
      a.kind = Kind::any_error;
    } else if (auto o = report::parse_outcome(alt)) {
      a.kind = Kind::outcome;
      a.outcome = *o;
    } else if (alt.rfind("error:", 0) == 0 && all_digits(alt.substr(6))) {
      a.kind = Kind::error_code;
      a.code = std::stoi(alt.substr(6));
    } else if (alt.rfind("error:", 0) == 0 && is_class_name(alt.substr(6))) {
      a.kind = Kind::error_class;
      a.error_class = taxonomy::parse_error_class(alt.substr(6));
    } else {
      throw std::invalid_argument("unknown expectation '" + alt +
                                  "' (expected an outcome, silent, error, error:<class>, "
                                  "error:<code> or any)");
    }
    e.alternatives_.push_back(std::move(a));
  }
  return e;
}

bool Expectation::judged() const {
  return !alternatives_.empty() &&
         std::none_of(alternatives_.begin(), alternatives_.end(),
                      [](const Alternative& a) { return a.kind == Alternative::Kind::any; });
}

bool Expectation::matches(const report::Result& r) const {
  return std::any_of(alternatives_.begin(), alternatives_.end(),
                     [&](const Alternative& a) { return a.matches(r); });
}

bool Expectation::accepts_clean() const {
  if (alternatives_.empty()) return true;
  report::Result clean;
  clean.outcome = Outcome::ok;
  return matches(clean);
}

bool Expectation::keeps_context() const {
  using Kind = Alternative::Kind;
  for (const auto& a : alternatives_) {
    switch (a.kind) {
      case Kind::silent: continue;
      case Kind::outcome:
        if (a.outcome == Outcome::ok || a.outcome == Outcome::mismatch || a.outcome == Outcome::invalid_config)
          continue;
        return false;
      case Kind::error_class:
        if (class_keeps_context(a.error_class)) continue;
        return false;
      case Kind::error_code: {
        const auto* entry = taxonomy::find_runtime(a.code);
        if (entry && !entry->sticky) continue;
        return false;
      }
      case Kind::any_error:
      case Kind::any: return false;
    }
  }
  return true;
}

bool Expectation::expects_timeout() const {
  return std::any_of(alternatives_.begin(), alternatives_.end(), [](const Alternative& a) {
    return a.kind == Alternative::Kind::outcome && a.outcome == Outcome::timeout;
  });
}

bool Expectation::Alternative::is_error() const {
  return kind == Kind::any_error || kind == Kind::error_class || kind == Kind::error_code ||
         (kind == Kind::outcome && outcome == Outcome::cuda_error);
}

bool Expectation::allows_error() const {
  return std::any_of(alternatives_.begin(), alternatives_.end(), [](const Alternative& a) { return a.is_error(); });
}

bool Expectation::requires_error() const {
  return !alternatives_.empty() &&
         std::all_of(alternatives_.begin(), alternatives_.end(), [](const Alternative& a) { return a.is_error(); });
}

void judge(report::Result& r, const Expectation& e) {
  r.expected = e.text();
  if (!e.judged() || r.outcome == Outcome::skipped) {
    r.expectation_met.reset();
    return;
  }
  r.expectation_met = e.matches(r);
}

}  // namespace cudadiag::cases

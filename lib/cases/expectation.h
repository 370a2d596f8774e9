#pragma once
// Expectation expressions: what a healthy host gives for a case under a profile.
// Parsed once (catalog, suite file, planning) and carried typed to judging.
//
// Alternatives separated by '|', each one of
//   an outcome name (report/vocabulary.h)   e.g. "ok", "timeout"
//   silent                    ok or mismatch (no error raised: the bug stays hidden)
//   error                     any cuda_error
//   error:<class>             a cuda_error of that taxonomy class, e.g. error:memory_fault
//   error:<code>              a cuda_error with that numeric code, e.g. error:700
//   any                       anything (not judged)
// e.g. "error:memory_fault|error:700", "silent", "ok".
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::cases {

class Expectation {
 public:
  Expectation() = default;
  // Throws std::invalid_argument naming the bad alternative.
  static Expectation parse(const std::string& text);

  // No expectation, or "any": the result is recorded, not judged.
  bool judged() const;
  bool matches(const report::Result& r) const;
  const std::string& text() const { return text_; }

  // A clean run (ok) is acceptable: a known-good case.
  bool accepts_clean() const;
  // Every alternative leaves the CUDA context usable: clean outcomes, rejected
  // configurations, or CUDA errors the taxonomy marks non-sticky (by code or class).
  bool keeps_context() const;
  // The case is expected to pass its deadline.
  bool expects_timeout() const;
  // Some alternative is a CUDA error (error, error:<class>, error:<code>, cuda_error).
  bool allows_error() const;
  // There are alternatives, and every one is a CUDA error.
  bool requires_error() const;

 private:
  struct Alternative {
    enum class Kind { outcome, silent, any_error, error_class, error_code, any } kind = Kind::any;
    report::Outcome outcome = report::Outcome::ok;
    // error:<class>: the class, or none for a well-formed word the taxonomy does not
    // know (it matches no error).
    std::optional<taxonomy::ErrorClass> error_class;
    int code = 0;
    bool matches(const report::Result& r) const;
    bool is_error() const;
  };
  std::string text_;
  std::vector<Alternative> alternatives_;
};

// Sets r.expected and r.expectation_met (unjudged: expectation_met empty). Skipped
// results are recorded with the expectation but never judged: they say nothing.
void judge(report::Result& r, const Expectation& e);

}  // namespace cudadiag::cases

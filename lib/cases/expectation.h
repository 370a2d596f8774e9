#pragma once
// Outcome vocabulary and expectation expressions.
//
// Outcomes (report result.outcome):
//   ok              ran; no CUDA error; results verified (or nothing to verify)
//   mismatch        ran; no CUDA error; results differ from the reference
//   cuda_error      a CUDA error surfaced (result.error has code, class, sticky, where)
//   invalid_config  rejected before launch (kernel constraints or device limits); reason given
//   timeout         passed its deadline and was killed
//   crashed         the child died by a signal, or exited non-zero without a result
//   no_result       the child exited 0 but sent no result
//   skipped         a precondition is missing (no GPU, no compute-sanitizer, not sm_90); reason given
//   host_valid      host-only check passed (e.g. TMA descriptor validator)
//   host_invalid    host-only check found violations
//   driver_disagrees  the driver's verdict differs from the host validator's
//
// Expectation expression: alternatives separated by '|', each one of
//   an outcome name above     e.g. "ok", "timeout"
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

const std::vector<std::string>& outcome_names();
bool is_outcome(const std::string& name);

class Expectation {
 public:
  Expectation() = default;
  // Throws std::invalid_argument naming the bad alternative.
  static Expectation parse(const std::string& text);
  bool empty() const { return alternatives_.empty(); }
  bool matches(const report::Result& r) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::string> alternatives_;
};

// Sets r.expected and r.expectation_met from an expression ("" leaves it unjudged).
void judge(report::Result& r, const std::string& expected);

}  // namespace cudadiag::cases

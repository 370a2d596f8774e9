#include <catch2/catch.hpp>

#include "cases/expectation.h"
#include "suite/verdict.h"
#include "util/exit_codes.h"

using namespace cudadiag;
using namespace cudadiag::suite;

namespace {
report::Result judged(const std::string& id, const std::string& outcome, const std::string& expected,
                      const std::string& profile = "default") {
  report::Result r;
  r.case_id = id;
  r.profile = profile;
  r.device = "GPU-aaa";
  r.outcome = outcome;
  if (outcome == "cuda_error") {
    r.error = report::ErrorInfo{};
    r.error->code = 700;
    r.error->name = "cudaErrorIllegalAddress";
    r.error->error_class = "memory_fault";
  }
  cases::judge(r, expected);
  return r;
}
}  // namespace

TEST_CASE("verdict: healthy when every expectation is met", "[verdict]") {
  const auto v = decide_verdict({judged("a", "ok", "ok"), judged("b", "cuda_error", "error:memory_fault", "fence"),
                                 judged("c", "ok", "silent")},
                                false);
  CHECK(v.status == "healthy");
  CHECK(v.reasons.empty());
  CHECK(exit_code_for(v, false) == kExitOk);
}

TEST_CASE("verdict: suspect names known-good failures and uncaught known-bad cases", "[verdict]") {
  const auto v = decide_verdict({judged("fa.seed", "cuda_error", "ok"),
                                 judged("fault.oob-write", "ok", "error:memory_fault", "fence"),
                                 judged("fine", "ok", "ok")},
                                false);
  CHECK(v.status == "suspect");
  REQUIRE(v.reasons.size() == 2);
  CHECK_THAT(v.reasons[0], Catch::StartsWith("known-good case fa.seed under default on GPU-aaa failed") &&
                               Catch::Contains("cudaErrorIllegalAddress 700"));
  CHECK_THAT(v.reasons[1], Catch::StartsWith("known-bad case fault.oob-write under fence") &&
                               Catch::Contains("was not caught"));
  CHECK(exit_code_for(v, false) == kExitFindings);
}

TEST_CASE("verdict: incomplete when runs were skipped or the run was interrupted", "[verdict]") {
  auto skipped = judged("x", "skipped", "ok");
  skipped.expectation_met.reset();  // skipped runs are not judged
  skipped.reason = "no NVIDIA driver";
  auto v = decide_verdict({judged("tma.seq1", "host_invalid", "host_invalid"), skipped}, false);
  CHECK(v.status == "incomplete");
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0] == "1 run(s) skipped: no NVIDIA driver");
  CHECK(exit_code_for(v, false) == kExitEnvironment);

  v = decide_verdict({judged("a", "ok", "ok")}, true);
  CHECK(v.status == "incomplete");
  CHECK_THAT(v.reasons[0], Catch::Contains("interrupted"));
  CHECK(exit_code_for(v, true) == kExitFindings);

  // a finding wins over incompleteness
  v = decide_verdict({judged("a", "cuda_error", "ok"), skipped}, false);
  CHECK(v.status == "suspect");
  CHECK(v.reasons.size() == 2);
}

TEST_CASE("verdict: known-good vs known-bad", "[verdict]") {
  CHECK(is_known_good("ok"));
  CHECK(is_known_good("silent"));
  CHECK(is_known_good("ok|mismatch"));
  CHECK_FALSE(is_known_good("error:700"));
  CHECK_FALSE(is_known_good("timeout"));
  CHECK_FALSE(is_known_good("host_invalid"));
}

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
  r.device = report::Device::gpu("GPU-aaa");
  r.outcome = *report::parse_outcome(outcome);
  if (outcome == "cuda_error") {
    r.error = report::ErrorInfo{};
    r.error->code = 700;
    r.error->name = "cudaErrorIllegalAddress";
    r.error->error_class = cudadiag::taxonomy::ErrorClass::memory_fault;
  }
  cases::judge(r, cases::Expectation::parse(expected));
  return r;
}
}  // namespace

TEST_CASE("verdict: healthy when every expectation is met", "[verdict]") {
  const auto v = decide_verdict({judged("a", "ok", "ok"), judged("b", "cuda_error", "error:memory_fault", "fence"),
                                 judged("c", "ok", "silent")},
                                false);
  CHECK(v.status == report::VerdictStatus::healthy);
  CHECK(v.reasons.empty());
  CHECK(report::exit_code_for(v.status, false) == kExitOk);
}

TEST_CASE("verdict: suspect names known-good failures and uncaught known-bad cases", "[verdict]") {
  const auto v = decide_verdict({judged("fa.seed", "cuda_error", "ok"),
                                 judged("fault.oob-write", "ok", "error:memory_fault", "fence"),
                                 judged("fine", "ok", "ok")},
                                false);
  CHECK(v.status == report::VerdictStatus::suspect);
  REQUIRE(v.reasons.size() == 2);
  CHECK_THAT(v.reasons[0], Catch::StartsWith("known-good case fa.seed under default on GPU-aaa failed") &&
                               Catch::Contains("cudaErrorIllegalAddress 700"));
  CHECK_THAT(v.reasons[1], Catch::StartsWith("known-bad case fault.oob-write under fence") &&
                               Catch::Contains("was not caught"));
  CHECK(report::exit_code_for(v.status, false) == kExitFindings);
}

TEST_CASE("verdict: incomplete when runs were skipped or the run was interrupted", "[verdict]") {
  auto skipped = judged("x", "skipped", "ok");
  skipped.expectation_met.reset();  // skipped runs are not judged
  skipped.reason = "no NVIDIA driver";
  auto v = decide_verdict({judged("tma.seq1", "host_invalid", "host_invalid"), skipped}, false);
  CHECK(v.status == report::VerdictStatus::incomplete);
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0] == "1 run(s) skipped: no NVIDIA driver");
  CHECK(report::exit_code_for(v.status, false) == kExitEnvironment);

  v = decide_verdict({judged("a", "ok", "ok")}, true);
  CHECK(v.status == report::VerdictStatus::incomplete);
  CHECK_THAT(v.reasons[0], Catch::Contains("interrupted"));
  CHECK(report::exit_code_for(v.status, true) == kExitFindings);

  // a finding wins over incompleteness
  v = decide_verdict({judged("a", "cuda_error", "ok"), skipped}, false);
  CHECK(v.status == report::VerdictStatus::suspect);
  CHECK(v.reasons.size() == 2);
}

TEST_CASE("verdict: known-good vs known-bad", "[verdict]") {
  auto good = [](const char* e) { return cases::Expectation::parse(e).accepts_clean(); };
  CHECK(good("ok"));
  CHECK(good("silent"));
  CHECK(good("ok|mismatch"));
  CHECK_FALSE(good("error:700"));
  CHECK_FALSE(good("timeout"));
  CHECK_FALSE(good("host_invalid"));
}

TEST_CASE("verdict: every status has one exit code, and each command its own statuses", "[verdict]") {
  using report::VerdictStatus;
  CHECK(report::exit_code_for(VerdictStatus::healthy) == kExitOk);
  CHECK(report::exit_code_for(VerdictStatus::same) == kExitOk);
  CHECK(report::exit_code_for(VerdictStatus::clean) == kExitOk);
  CHECK(report::exit_code_for(VerdictStatus::findings) == kExitFindings);
  CHECK(report::exit_code_for(VerdictStatus::exposed) == kExitFindings);
  CHECK(report::exit_code_for(VerdictStatus::no_gpu) == kExitEnvironment);
  CHECK(report::exit_code_for(VerdictStatus::healthy, true) == kExitFindings);
  for (const char* command : {"repro", "compare", "fault", "index-select", "attention", "tma", "env", "run"}) {
    INFO(command);
    const auto parsed = report::parse_command(command);
    REQUIRE(parsed);
    CHECK(report::to_string(*parsed) == command);
    const auto& statuses = report::statuses_of(*parsed);
    CHECK_FALSE(statuses.empty());
    for (auto s : statuses) CHECK(report::parse_verdict_status(report::to_string(s)) == s);
  }
  CHECK_FALSE(report::parse_command("nonsense"));
  CHECK_FALSE(report::parse_command("index_select"));  // the command's own spelling only
}

// Verdicts of the single-case commands (`fault`, `index-select`), decided on the CPU.
#include <catch2/catch.hpp>

#include "evidence/cuda_start.h"
#include "suite/single_case.h"

using namespace cudadiag;
using report::Outcome;
using report::VerdictStatus;

namespace {

report::Report one(Outcome o, const std::string& expected, std::optional<bool> met) {
  report::Report rep = report::new_report({"cudadiag", "fault"}, "fault");
  report::Result r;
  r.case_id = "fault.oob-write";
  r.outcome = o;
  r.expected = expected;
  r.expectation_met = met;
  if (o == Outcome::cuda_error) {
    r.error = report::ErrorInfo{};
    r.error->code = 700;
    r.error->name = "cudaErrorIllegalAddress";
    r.error->error_class = cudadiag::taxonomy::ErrorClass::memory_fault;
    r.error->surfaced_at = "synchronize";
  }
  rep.results.push_back(r);
  rep.gpu = {true, std::nullopt};
  return rep;
}

}  // namespace

TEST_CASE("fault verdict: the expectation decides", "[single_case]") {
  auto v = suite::expectation_verdict(one(Outcome::cuda_error, "error:memory_fault", true));
  CHECK(v.status == VerdictStatus::ok);
  CHECK(v.reasons.front() == "fault.oob-write: cuda_error as expected (error:memory_fault)");

  v = suite::expectation_verdict(one(Outcome::ok, "error:memory_fault", false));
  CHECK(v.status == VerdictStatus::findings);
  CHECK_THAT(v.reasons.front(), Catch::Contains("a healthy host gives error:memory_fault"));
}

TEST_CASE("fault and index-select verdicts: no GPU", "[single_case]") {
  auto rep = one(Outcome::cuda_error, "ok", std::nullopt);
  rep.results[0].error->code = 35;
  rep.results[0].error->name = "cudaErrorInsufficientDriver";
  rep.results[0].error->error_class = taxonomy::ErrorClass::no_device;
  rep.gpu = {false, "cudaErrorInsufficientDriver (35)"};
  CHECK(evidence::cuda_could_not_start(rep.results[0]));
  CHECK(suite::expectation_verdict(rep).status == VerdictStatus::no_gpu);
  CHECK(suite::output_verdict(rep, profiles::Allocator::pool).status == VerdictStatus::no_gpu);
  CHECK(report::exit_code_for(VerdictStatus::no_gpu) == 3);
}

TEST_CASE("index-select verdict: anything but a matching output is a finding", "[single_case]") {
  CHECK(suite::output_verdict(one(Outcome::ok, "ok", true), profiles::Allocator::pool).status == VerdictStatus::ok);
  const auto v = suite::output_verdict(one(Outcome::cuda_error, "error:memory_fault", true),
                                       profiles::Allocator::fence_back);
  CHECK(v.status == VerdictStatus::findings);
  REQUIRE(v.reasons.size() == 2);
  CHECK(v.reasons[0] == "cuda_error cudaErrorIllegalAddress (700) at synchronize");
  CHECK(v.reasons[1] == "as expected for these parameters under fence-back (error:memory_fault)");
}

TEST_CASE("CUDA could not start: no device and a mismatched driver, nothing else", "[single_case]") {
  report::Result r;
  r.outcome = Outcome::cuda_error;
  r.error = report::ErrorInfo{};
  for (const auto cls : {taxonomy::ErrorClass::no_device, taxonomy::ErrorClass::driver_mismatch}) {
    r.error->error_class = cls;
    CHECK(evidence::cuda_could_not_start(r));
  }
  r.error->error_class = taxonomy::ErrorClass::memory_fault;
  CHECK_FALSE(evidence::cuda_could_not_start(r));
  r.error->error_class = taxonomy::ErrorClass::no_device;
  r.outcome = Outcome::crashed;
  CHECK_FALSE(evidence::cuda_could_not_start(r));
  // The exit code: 3 from the one rule, an interruption first.
  CHECK(report::exit_code_for(VerdictStatus::inconclusive, false, true) == 3);
  CHECK(report::exit_code_for(VerdictStatus::inconclusive, true, true) == 1);
}

TEST_CASE("fault and index-select verdicts name the site a site run found", "[single_case][site_runs]") {
  auto rep = one(Outcome::cuda_error, "error:memory_fault", true);
  CHECK(suite::expectation_verdict(rep).reasons.size() == 1);  // no site run, no site
  report::FaultSite s;
  s.exception = "Warp Illegal Address";
  s.exception_id = report::ExceptionKind::warp_illegal_address;
  s.kernel = "oob_write_kernel(float*, int)";
  s.file = "memory_faults.cu";
  s.line = 42;
  rep.results[0].fault_sites = {s};
  auto v = suite::expectation_verdict(rep);
  CHECK(v.status == VerdictStatus::ok);
  REQUIRE(v.reasons.size() == 2);
  CHECK(v.reasons[0] == "fault.oob-write: cuda_error as expected (error:memory_fault)");
  CHECK_THAT(v.reasons[1], Catch::Contains("oob_write_kernel(float*, int) at memory_faults.cu:42"));
  v = suite::output_verdict(rep, profiles::Allocator::fence_back);
  CHECK(v.status == VerdictStatus::findings);
  REQUIRE(v.reasons.size() == 3);
  CHECK_THAT(v.reasons[2], Catch::StartsWith("fault site (a second run with GPU core dumps armed): "));
}

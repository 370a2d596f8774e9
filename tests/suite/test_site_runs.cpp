// Which results of a command get a site run, and how its dump's sites join the result.
#include <catch2/catch.hpp>

#include "suite/site_runs.h"

using namespace cudadiag;
using report::Outcome;
using suite::SitePolicy;

namespace {

report::Result result(Outcome o, taxonomy::ErrorClass c = taxonomy::ErrorClass::memory_fault) {
  report::Result r;
  r.case_id = "fault.oob-write";
  r.outcome = o;
  if (o == Outcome::cuda_error) {
    r.error = report::ErrorInfo{};
    r.error->code = 700;
    r.error->name = "cudaErrorIllegalAddress";
    r.error->error_class = c;
    r.error->surfaced_at = "synchronize";
  }
  return r;
}

report::FaultSite store_site() {
  report::FaultSite s;
  s.dump = "case-3_4242.nvcudmp";
  s.dump_bytes = 300000;
  s.exception = "Warp Illegal Address";
  s.exception_id = report::ExceptionKind::warp_illegal_address;
  s.kernel = "oob_write_kernel(float*, int)";
  s.file = "memory_faults.cu";
  s.line = 42;
  s.thread_note = "not known: the SM reported the exception after the warp had exited";
  return s;
}

}  // namespace

TEST_CASE("site runs: a fault a dump can locate, not a wrong result or a refused launch", "[site_runs]") {
  for (const auto c : {taxonomy::ErrorClass::memory_fault, taxonomy::ErrorClass::misaligned,
                       taxonomy::ErrorClass::device_assert, taxonomy::ErrorClass::illegal_instruction,
                       taxonomy::ErrorClass::launch_failure})
    CHECK(suite::is_dumpable_failure(result(Outcome::cuda_error, c)));
  for (const auto c : {taxonomy::ErrorClass::launch_config, taxonomy::ErrorClass::out_of_memory,
                       taxonomy::ErrorClass::no_device, taxonomy::ErrorClass::invalid_value})
    CHECK_FALSE(suite::is_dumpable_failure(result(Outcome::cuda_error, c)));
  CHECK(suite::is_dumpable_failure(result(Outcome::crashed)));
  CHECK(suite::is_dumpable_failure(result(Outcome::timeout)));
  for (const auto o : {Outcome::ok, Outcome::mismatch, Outcome::skipped, Outcome::invalid_config, Outcome::no_result})
    CHECK_FALSE(suite::is_dumpable_failure(result(o)));
  // A CUDA error without its error (a malformed line) names no class: no site run.
  auto bare = result(Outcome::cuda_error);
  bare.error.reset();
  CHECK_FALSE(suite::is_dumpable_failure(bare));
}

TEST_CASE("site runs: repro sites the faults that missed their expectation, fault every fault", "[site_runs]") {
  auto expected_fault = result(Outcome::cuda_error);
  expected_fault.expectation_met = true;  // a reproducer caught as the catalog says
  auto unexpected_fault = result(Outcome::cuda_error);
  unexpected_fault.expectation_met = false;  // a known-good kernel that faulted
  auto wrong = result(Outcome::mismatch);
  wrong.expectation_met = false;
  auto missed = result(Outcome::ok);
  missed.expectation_met = false;  // a reproducer not caught: nothing to site
  auto crash = result(Outcome::crashed);
  crash.expectation_met = false;
  auto unjudged = result(Outcome::cuda_error);

  CHECK_FALSE(suite::wants_site_run(expected_fault, SitePolicy::missed_expectation));
  CHECK(suite::wants_site_run(unexpected_fault, SitePolicy::missed_expectation));
  CHECK(suite::wants_site_run(crash, SitePolicy::missed_expectation));
  CHECK_FALSE(suite::wants_site_run(wrong, SitePolicy::missed_expectation));
  CHECK_FALSE(suite::wants_site_run(missed, SitePolicy::missed_expectation));
  CHECK_FALSE(suite::wants_site_run(unjudged, SitePolicy::missed_expectation));

  CHECK(suite::wants_site_run(expected_fault, SitePolicy::every_failure));
  CHECK(suite::wants_site_run(unexpected_fault, SitePolicy::every_failure));
  CHECK(suite::wants_site_run(unjudged, SitePolicy::every_failure));
  CHECK_FALSE(suite::wants_site_run(wrong, SitePolicy::every_failure));
  CHECK_FALSE(suite::wants_site_run(missed, SitePolicy::every_failure));

  for (const auto* r : {&expected_fault, &unexpected_fault, &crash, &unjudged})
    CHECK_FALSE(suite::wants_site_run(*r, SitePolicy::none));
}

TEST_CASE("site runs: the dump's sites join the result, whose outcome, error and reason stay the unarmed run's",
          "[site_runs]") {
  auto original = result(Outcome::cuda_error);
  original.reason = "the unarmed run's reason";
  original.expectation_met = true;
  original.details.set("pid", report::Value(17));
  // Armed, the store's run saw success; the dump came while the child waited.
  auto site_run = result(Outcome::ok);
  site_run.fault_sites = {store_site()};
  CHECK(suite::merge_site_run(original, site_run));
  CHECK(original.outcome == Outcome::cuda_error);
  REQUIRE(original.error);
  CHECK(original.error->surfaced_at == "synchronize");
  CHECK(original.error->name == "cudaErrorIllegalAddress");
  CHECK(original.reason == "the unarmed run's reason");
  CHECK(original.expectation_met == true);
  REQUIRE(original.fault_sites.size() == 1);
  CHECK(original.fault_sites[0].kernel == "oob_write_kernel(float*, int)");
  const auto details = report::to_json(original.details);
  CHECK(details["pid"] == 17);
  CHECK(details["coredump"]["site_run"] == "ok");
  CHECK(details["coredump"]["dumps"] == 1);

  // No dump came: no site, and the details say how the site run ended.
  auto plain = result(Outcome::crashed);
  plain.reason = "the child was killed by SIGSEGV during this case";
  auto no_dump = result(Outcome::crashed);
  CHECK_FALSE(suite::merge_site_run(plain, no_dump));
  CHECK(plain.fault_sites.empty());
  CHECK(plain.outcome == Outcome::crashed);
  CHECK(plain.reason == "the child was killed by SIGSEGV during this case");
  CHECK(report::to_json(plain.details)["coredump"]["dumps"] == 0);
}

TEST_CASE("site runs: the verdict line names the site", "[site_runs]") {
  auto r = result(Outcome::cuda_error);
  CHECK(suite::site_reason(r).empty());
  report::FaultSite unreadable;
  unreadable.unreadable = "truncated";
  r.fault_sites = {unreadable};
  CHECK(suite::site_reason(r).empty());
  r.fault_sites.push_back(store_site());
  const std::string line = suite::site_reason(r);
  CHECK_THAT(line, Catch::StartsWith("fault site (a second run with GPU core dumps armed): Warp Illegal Address in "
                                     "oob_write_kernel(float*, int) at memory_faults.cu:42"));
}

#include <catch2/catch.hpp>

#include "evidence/site_error.h"

using namespace cudadiag;

namespace {

report::FaultSite site(std::string exception, std::string id, std::string kernel) {
  report::FaultSite s;
  s.dump = "core_1.nvcudmp";
  s.exception = std::move(exception);
  s.exception_id = parse_choice(report::kExceptionKinds, id).value_or(report::ExceptionKind::unknown);
  s.kernel = std::move(kernel);
  return s;
}

}  // namespace

TEST_CASE("site error: a dump's exception is the runtime error the program would have seen", "[site_error]") {
  const auto illegal = site("Warp Illegal Address", "warp_illegal_address", "fill(float*, int)");
  CHECK(evidence::site_error_class(illegal) == taxonomy::ErrorClass::memory_fault);
  auto e = evidence::site_error_info(illegal);
  CHECK(e.code == 700);
  CHECK(e.name == "cudaErrorIllegalAddress");
  CHECK(e.sticky);
  CHECK(e.surfaced_at == "coredump");
  CHECK_THAT(e.message, Catch::Contains("Warp Illegal Address") && Catch::Contains("fill(float*, int)"));

  CHECK(evidence::site_error_info(site("Warp Misaligned Address", "warp_misaligned_address", "k")).name ==
        "cudaErrorMisalignedAddress");
  CHECK(evidence::site_error_info(site("Warp Assert", "warp_assert", "k")).name == "cudaErrorAssert");
  const auto odd = evidence::site_error_info(site("Warp Stack Canary", "warp_stack_canary", "k"));
  CHECK(odd.code == 0);
  CHECK(odd.error_class == taxonomy::ErrorClass::unknown);
}

TEST_CASE("site error: which site says why the driver ended a process", "[site_error]") {
  // A trap's dump names no exception but the kernel: the unspecified launch failure.
  const auto trap = site("", "none", "trap_kernel(float const*, float*, long long)");
  std::vector<report::FaultSite> sites{trap};
  REQUIRE(evidence::dumped_site(sites) == &sites[0]);
  CHECK(evidence::exception_site(sites) == nullptr);
  const auto e = evidence::site_error_info(trap);
  CHECK(e.code == 719);
  CHECK(e.name == "cudaErrorLaunchFailure");
  CHECK_THAT(e.message, Catch::StartsWith("GPU core dump written at an exception it does not name"));

  // The exception site wins over an earlier one without; unreadable dumps prove nothing.
  auto unreadable = site("Warp Illegal Address", "warp_illegal_address", "k");
  unreadable.unreadable = "truncated";
  sites = {unreadable, trap, site("Warp Assert", "warp_assert", "k")};
  REQUIRE(evidence::dumped_site(sites) == &sites[2]);
  sites = {unreadable};
  CHECK(evidence::dumped_site(sites) == nullptr);
  CHECK(evidence::dumped_site({}) == nullptr);
}

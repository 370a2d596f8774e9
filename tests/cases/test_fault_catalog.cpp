#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "cases/catalog.h"
#include "cases/expectation.h"
#include "cases/run_expectation.h"

using namespace cudadiag;
using namespace cudadiag::cases;

namespace {

std::vector<CaseDef> fault_catalog() {
  std::vector<CaseDef> out;
  for (const auto& c : all_cases())
    if (c.family == Family::fault) out.push_back(c);
  return out;
}

const CaseDef& fault(const std::string& name) {
  const CaseDef* c = find_case("fault." + name);
  REQUIRE(c != nullptr);
  return *c;
}

report::Result with_error(int code, const std::string& cls) {
  report::Result r;
  r.outcome = report::Outcome::cuda_error;
  r.error = report::ErrorInfo{};
  r.error->code = code;
  r.error->error_class = *taxonomy::parse_error_class(cls);
  return r;
}

}  // namespace

TEST_CASE("the fault catalog has every reproducer of the issue, once") {
  std::set<std::string> ids;
  for (const auto& c : fault_catalog()) CHECK(ids.insert(c.id).second);
  for (const char* name : {"oob-write", "oob-read", "underrun-write", "underrun-read", "misaligned-vector-load",
                           "device-assert", "use-after-free", "trap", "hang", "too-many-threads",
                           "smem-over-limit", "out-of-memory", "too-many-resources", "ok-control"})
    CHECK(ids.count(std::string("fault.") + name) == 1);
}

TEST_CASE("every fault case has a parsable expectation for every profile and allocator") {
  for (const auto& c : fault_catalog()) {
    INFO(c.id);
    for (const char* profile : {"default", "blocking", "nocache", "fence", "blocking+fence", "sanitizer"}) {
      const std::string e = expectation_text(c, profile);
      INFO(profile);
      CHECK_FALSE(e.empty());
      CHECK_NOTHROW(Expectation::parse(e));
    }
    for (const auto& [alloc, name] : profiles::kAllocators)
      for (bool blocking : {false, true}) CHECK(expectation_for_run(c, alloc, blocking).judged());
  }
}

TEST_CASE("overruns are silent under pool and direct and fault under the fence at the end") {
  for (const char* name : {"oob-write", "oob-read"}) {
    const auto& c = fault(name);
    CHECK(c.fence_allocator == profiles::Allocator::fence_back);
    CHECK(expectation_for_run(c, profiles::Allocator::pool, false).text() == "silent");
    CHECK(expectation_for_run(c, profiles::Allocator::direct, false).text() == "silent");
    CHECK(expectation_for_run(c, profiles::Allocator::fence_back, false).text() == "error:memory_fault");
    CHECK(expectation_for_run(c, profiles::Allocator::fence_back, true).text() == "error:memory_fault");
    // The guard before the buffer does not see an overrun past its end.
    CHECK(expectation_for_run(c, profiles::Allocator::fence_front, false).text() == "silent");
    CHECK(Expectation::parse(expectation_text(c, "fence")).matches(with_error(700, "memory_fault")));
  }
}

TEST_CASE("underruns use the front fence") {
  for (const char* name : {"underrun-write", "underrun-read"}) {
    const auto& c = fault(name);
    CHECK(c.fence_allocator == profiles::Allocator::fence_front);
    CHECK(expectation_for_run(c, profiles::Allocator::fence_front, false).text() == "error:memory_fault");
    CHECK(expectation_for_run(c, profiles::Allocator::fence_back, false).text() == "silent");
    CHECK(profiles::profile_name_for_run(profiles::Allocator::fence_front, true, c.fence_allocator) == "blocking+fence");
  }
}

TEST_CASE("allocator-independent faults expect their error code everywhere") {
  CHECK(expectation_for_run(fault("misaligned-vector-load"), profiles::Allocator::fence_back, true).text() == "error:716");
  CHECK(expectation_for_run(fault("device-assert"), profiles::Allocator::direct, false).text() == "error:710");
  CHECK(expectation_for_run(fault("too-many-threads"), profiles::Allocator::pool, false).text() == "error:1|error:9");
  CHECK(expectation_for_run(fault("out-of-memory"), profiles::Allocator::fence_front, false).text() == "error:2");
  CHECK(expectation_for_run(fault("too-many-resources"), profiles::Allocator::pool, true).text() == "error:701");
  CHECK(expectation_for_run(fault("ok-control"), profiles::Allocator::fence_front, true).text() == "ok");
  const auto& hang = fault("hang");
  CHECK(expectation_for_run(hang, profiles::Allocator::pool, false).text() == "timeout");
  CHECK(hang.deadline_ms > 0);
  CHECK(hang.deadline_ms <= 5000);
}

TEST_CASE("use after free is silent under the pool and faults under the fence") {
  const auto& c = fault("use-after-free");
  CHECK(expectation_for_run(c, profiles::Allocator::pool, false).text() == "silent");
  CHECK(expectation_for_run(c, profiles::Allocator::fence_back, false).text() == "error:memory_fault");
  CHECK(expectation_for_run(c, profiles::Allocator::fence_front, false).text() == "error:memory_fault");
}

TEST_CASE("known-bad reproducers run in their own child; launch errors and the control do not need to") {
  CHECK(fault("oob-write").expects_fault);
  CHECK(fault("hang").expects_fault);
  CHECK_FALSE(fault("ok-control").expects_fault);
  CHECK_FALSE(fault("too-many-threads").expects_fault);
}

TEST_CASE("fault parameters are validated with messages naming the parameter") {
  CHECK(normalize_params(Family::fault, {{"reproducer", "oob-write"}})["k"] == 1);
  CHECK(normalize_params(Family::fault, {{"reproducer", "oob-write"}, {"k", 16}})["k"] == 16);
  CHECK(normalize_params(Family::fault, {{"reproducer", "misaligned-vector-load"}})["offset_bytes"] == 4);
  auto message = [](const cudadiag::report::json& p) {
    try {
      normalize_params(Family::fault, p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({{"reproducer", "nope"}}).find("reproducer: unknown 'nope'") != std::string::npos);
  CHECK(message(cudadiag::report::json::object()).find("reproducer: missing") != std::string::npos);
  CHECK(message({{"reproducer", "oob-write"}, {"k", 0}}).find("k: 0 is outside") != std::string::npos);
  CHECK(message({{"reproducer", "oob-write"}, {"k", 5000}}).find("k: 5000") != std::string::npos);
  CHECK(message({{"reproducer", "oob-write"}, {"k", "1"}}).find("k: expected an integer") != std::string::npos);
  CHECK(message({{"reproducer", "trap"}, {"k", 2}}).find("k: only") != std::string::npos);
  CHECK(message({{"reproducer", "oob-write"}, {"elements", 1001}}).find("multiple of 4") != std::string::npos);
  CHECK(message({{"reproducer", "misaligned-vector-load"}, {"offset_bytes", 16}}).find("offset_bytes") !=
        std::string::npos);
  CHECK(message({{"reproducer", "oob-write"}, {"speed", 1}}).find("unknown fault parameter 'speed'") !=
        std::string::npos);
}

TEST_CASE("profile names for an allocator and CUDA_LAUNCH_BLOCKING") {
  CHECK(profiles::profile_name_for_run(profiles::Allocator::pool, false, profiles::Allocator::fence_back) == "default");
  CHECK(profiles::profile_name_for_run(profiles::Allocator::pool, true, profiles::Allocator::fence_back) == "blocking");
  CHECK(profiles::profile_name_for_run(profiles::Allocator::direct, true, profiles::Allocator::fence_back) == "blocking+nocache");
  CHECK(profiles::profile_name_for_run(profiles::Allocator::fence_back, false, profiles::Allocator::fence_back) == "fence");
  CHECK(profiles::profile_name_for_run(profiles::Allocator::fence_front, false, profiles::Allocator::fence_back) == "fence-front");
  CHECK_FALSE(profiles::parse_allocator("malloc").has_value());
}

TEST_CASE("blocking variants copy their plain entries without overriding explicit ones") {
  ProfileExpectations x{"ok", {{"default", "silent"}, {"fence", "error:700"}, {"blocking+fence", "error"}, {"fence-front", "silent"}}};
  add_blocking_variants(x);
  auto& e = x.by_profile;
  CHECK(e["blocking"] == "silent");
  CHECK(e["blocking+fence"] == "error");
  CHECK(e["blocking+fence-front"] == "silent");
  CHECK(e.count("blocking+blocking") == 0);
  CHECK(x.otherwise == "ok");  // every other profile: not copied, found through otherwise
  CHECK(x.text_for("blocking+sanitizer") == "ok");
}

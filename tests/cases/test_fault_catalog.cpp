#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "cases/catalog.h"
#include "cases/expectation.h"
#include "cases/run_expectation.h"

using namespace cudadiag::cases;

namespace {

std::vector<CaseDef> fault_catalog() {
  std::vector<CaseDef> out;
  for (const auto& c : all_cases())
    if (c.kernel == "fault") out.push_back(c);
  return out;
}

const CaseDef& fault(const std::string& name) {
  const CaseDef* c = find_case("fault." + name);
  REQUIRE(c != nullptr);
  return *c;
}

cudadiag::report::Result with_error(int code, const std::string& cls) {
  cudadiag::report::Result r;
  r.outcome = "cuda_error";
  r.error = cudadiag::report::ErrorInfo{};
  r.error->code = code;
  r.error->error_class = cls;
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
      const std::string e = expectation_for(c, profile);
      INFO(profile);
      CHECK_FALSE(e.empty());
      CHECK_NOTHROW(Expectation::parse(e));
    }
    for (const char* alloc : {"pool", "direct", "fence-back", "fence-front"})
      for (bool blocking : {false, true}) CHECK_FALSE(expectation_for_run(c, alloc, blocking).empty());
  }
}

TEST_CASE("overruns are silent under pool and direct and fault under the fence at the end") {
  for (const char* name : {"oob-write", "oob-read"}) {
    const auto& c = fault(name);
    CHECK(c.fence_allocator == "fence-back");
    CHECK(expectation_for_run(c, "pool", false) == "silent");
    CHECK(expectation_for_run(c, "direct", false) == "silent");
    CHECK(expectation_for_run(c, "fence-back", false) == "error:memory_fault");
    CHECK(expectation_for_run(c, "fence-back", true) == "error:memory_fault");
    // The guard before the buffer does not see an overrun past its end.
    CHECK(expectation_for_run(c, "fence-front", false) == "silent");
    CHECK(Expectation::parse(expectation_for(c, "fence")).matches(with_error(700, "memory_fault")));
  }
}

TEST_CASE("underruns use the front fence") {
  for (const char* name : {"underrun-write", "underrun-read"}) {
    const auto& c = fault(name);
    CHECK(c.fence_allocator == "fence-front");
    CHECK(expectation_for_run(c, "fence-front", false) == "error:memory_fault");
    CHECK(expectation_for_run(c, "fence-back", false) == "silent");
    CHECK(profile_for_run("fence-front", true, c.fence_allocator) == "blocking+fence");
  }
}

TEST_CASE("allocator-independent faults expect their error code everywhere") {
  CHECK(expectation_for_run(fault("misaligned-vector-load"), "fence-back", true) == "error:716");
  CHECK(expectation_for_run(fault("device-assert"), "direct", false) == "error:710");
  CHECK(expectation_for_run(fault("too-many-threads"), "pool", false) == "error:1|error:9");
  CHECK(expectation_for_run(fault("out-of-memory"), "fence-front", false) == "error:2");
  CHECK(expectation_for_run(fault("too-many-resources"), "pool", true) == "error:701");
  CHECK(expectation_for_run(fault("ok-control"), "fence-front", true) == "ok");
  const auto& hang = fault("hang");
  CHECK(expectation_for_run(hang, "pool", false) == "timeout");
  CHECK(hang.deadline_ms > 0);
  CHECK(hang.deadline_ms <= 5000);
}

TEST_CASE("use after free is silent under the pool and faults under the fence") {
  const auto& c = fault("use-after-free");
  CHECK(expectation_for_run(c, "pool", false) == "silent");
  CHECK(expectation_for_run(c, "fence-back", false) == "error:memory_fault");
  CHECK(expectation_for_run(c, "fence-front", false) == "error:memory_fault");
}

TEST_CASE("known-bad reproducers run in their own child; launch errors and the control do not need to") {
  CHECK(fault("oob-write").expects_fault);
  CHECK(fault("hang").expects_fault);
  CHECK_FALSE(fault("ok-control").expects_fault);
  CHECK_FALSE(fault("too-many-threads").expects_fault);
}

TEST_CASE("fault parameters are validated with messages naming the parameter") {
  CHECK(normalize_params("fault", {{"reproducer", "oob-write"}})["k"] == 1);
  CHECK(normalize_params("fault", {{"reproducer", "oob-write"}, {"k", 16}})["k"] == 16);
  CHECK(normalize_params("fault", {{"reproducer", "misaligned-vector-load"}})["offset_bytes"] == 4);
  auto message = [](const cudadiag::report::json& p) {
    try {
      normalize_params("fault", p);
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
  CHECK(profile_for_run("pool", false, "fence-back") == "default");
  CHECK(profile_for_run("pool", true, "fence-back") == "blocking");
  CHECK(profile_for_run("direct", true, "fence-back") == "blocking+nocache");
  CHECK(profile_for_run("fence-back", false, "fence-back") == "fence");
  CHECK(profile_for_run("fence-front", false, "fence-back") == "fence-front");
  CHECK_THROWS_AS(profile_for_run("malloc", false, "fence-back"), std::invalid_argument);
}

TEST_CASE("blocking variants copy their plain entries without overriding explicit ones") {
  std::map<std::string, std::string> e = {{"default", "silent"}, {"fence", "error:700"}, {"blocking+fence", "error"}};
  add_blocking_variants(e);
  CHECK(e["blocking"] == "silent");
  CHECK(e["blocking+fence"] == "error");
  CHECK(e.count("blocking+blocking") == 0);
}

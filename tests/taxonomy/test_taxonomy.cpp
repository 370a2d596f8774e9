#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "taxonomy/taxonomy.h"

namespace tx = cudadiag::taxonomy;

TEST_CASE("every code that matters to triage is in the table with a known class") {
  const int required[] = {700, 701, 702, 709, 710, 714, 715, 716, 717, 718, 719, 2,   1,
                          9,   35,  98,  100, 209, 222, 999, 3,   4,   13,  46,  101, 200,
                          218, 300, 400, 500, 801, 803, 804, 909, 34,  214, 226};
  for (const int code : required) {
    INFO("code " << code);
    const auto* e = tx::find_runtime(code);
    REQUIRE(e != nullptr);
    CHECK(tx::is_known_class(tx::to_string(e->error_class)));
    CHECK((e->error_class == cudadiag::taxonomy::ErrorClass::unknown) == (code == 999));  // only the catch-all is unknown
    CHECK_FALSE(e->meaning.empty());
    CHECK_FALSE(e->next_step.empty());
  }
}

TEST_CASE("every entry is complete and uses the class vocabulary") {
  for (const auto& e : tx::all()) {
    INFO(e.name);
    CHECK(e.name.rfind("cudaError", 0) == 0);
    CHECK(tx::is_known_class(tx::to_string(e.error_class)));
    CHECK_FALSE(e.meaning.empty());
    CHECK_FALSE(e.next_step.empty());
    if (e.driver_code >= 0) CHECK(e.driver_name.rfind("CUDA_ERROR_", 0) == 0);
    else CHECK(e.driver_name.empty());
  }
}

TEST_CASE("no duplicate runtime codes, driver codes or names") {
  std::set<int> runtime, driver;
  std::set<std::string> names;
  for (const auto& e : tx::all()) {
    INFO(e.name);
    CHECK(runtime.insert(e.code).second);
    if (e.driver_code >= 0) CHECK(driver.insert(e.driver_code).second);
    CHECK(names.insert(std::string(e.name)).second);
    if (!e.driver_name.empty()) CHECK(names.insert(std::string(e.driver_name)).second);
  }
}

TEST_CASE("lookups by runtime code, driver code and both names agree") {
  const auto* by_runtime = tx::find_runtime(700);
  REQUIRE(by_runtime != nullptr);
  CHECK(by_runtime->name == "cudaErrorIllegalAddress");
  CHECK(tx::find_driver(700) == by_runtime);
  CHECK(tx::find_by_name("cudaErrorIllegalAddress") == by_runtime);
  CHECK(tx::find_by_name("CUDA_ERROR_ILLEGAL_ADDRESS") == by_runtime);
  CHECK(tx::find(700, tx::ErrorSource::driver) == by_runtime);
  CHECK(tx::find(700, tx::ErrorSource::runtime) == by_runtime);

  // Same number, different names in the two APIs.
  const auto* oom = tx::find_driver(2);
  REQUIRE(oom != nullptr);
  CHECK(oom->name == "cudaErrorMemoryAllocation");
  CHECK(oom->driver_name == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(oom->error_class == cudadiag::taxonomy::ErrorClass::out_of_memory);
  CHECK(tx::find_by_name("CUDA_ERROR_LAUNCH_FAILED") == tx::find_runtime(719));
  CHECK(tx::find_by_name("CUDA_ERROR_NO_BINARY_FOR_GPU") == tx::find_runtime(209));
}

TEST_CASE("runtime-only errors are not found by driver code") {
  REQUIRE(tx::find_runtime(9) != nullptr);
  CHECK(tx::find_runtime(9)->error_class == cudadiag::taxonomy::ErrorClass::launch_config);
  CHECK(tx::find_driver(9) == nullptr);
  REQUIRE(tx::find_runtime(35) != nullptr);
  CHECK(tx::find_driver(35) == nullptr);
  CHECK(tx::find_driver(-1) == nullptr);
  CHECK(tx::find(98, tx::ErrorSource::driver) == nullptr);
  CHECK(tx::find(98, tx::ErrorSource::runtime)->error_class == cudadiag::taxonomy::ErrorClass::no_kernel_image);
}

TEST_CASE("unknown codes and names are not found") {
  CHECK(tx::find_runtime(123456) == nullptr);
  CHECK(tx::find_driver(123456) == nullptr);
  CHECK(tx::find_by_name("cudaErrorNoSuchThing") == nullptr);
  CHECK(tx::find_by_name("") == nullptr);
}

TEST_CASE("sticky flags: device exceptions corrupt the context, API errors do not") {
  for (const int code : {700, 702, 710, 714, 715, 716, 717, 718, 719, 999}) {
    INFO("code " << code);
    REQUIRE(tx::find_runtime(code) != nullptr);
    CHECK(tx::find_runtime(code)->sticky);
  }
  for (const int code : {1, 2, 9, 35, 98, 100, 209, 701, 720}) {
    INFO("code " << code);
    REQUIRE(tx::find_runtime(code) != nullptr);
    CHECK_FALSE(tx::find_runtime(code)->sticky);
  }
}

TEST_CASE("key classes") {
  CHECK(tx::find_runtime(700)->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  CHECK(tx::find_runtime(716)->error_class == cudadiag::taxonomy::ErrorClass::misaligned);
  CHECK(tx::find_runtime(710)->error_class == cudadiag::taxonomy::ErrorClass::device_assert);
  CHECK(tx::find_runtime(715)->error_class == cudadiag::taxonomy::ErrorClass::illegal_instruction);
  CHECK(tx::find_runtime(719)->error_class == cudadiag::taxonomy::ErrorClass::launch_failure);
  CHECK(tx::find_runtime(701)->error_class == cudadiag::taxonomy::ErrorClass::out_of_resources);
  CHECK(tx::find_runtime(100)->error_class == cudadiag::taxonomy::ErrorClass::no_device);
  CHECK(tx::find_runtime(35)->error_class == cudadiag::taxonomy::ErrorClass::no_device);
  CHECK(tx::find_runtime(222)->error_class == cudadiag::taxonomy::ErrorClass::driver_mismatch);
  CHECK(tx::find_runtime(209)->error_class == cudadiag::taxonomy::ErrorClass::no_kernel_image);
  CHECK(tx::find_runtime(1)->error_class == cudadiag::taxonomy::ErrorClass::invalid_value);
  CHECK(tx::find_runtime(214)->error_class == cudadiag::taxonomy::ErrorClass::hardware);
  CHECK(tx::find_runtime(999)->error_class == cudadiag::taxonomy::ErrorClass::unknown);
}

TEST_CASE("class vocabulary is stable") {
  const auto c = tx::classes();
  REQUIRE(c.size() == 15);
  CHECK(c.front() == "memory_fault");
  CHECK(c.back() == "unknown");
  CHECK(tx::is_known_class("misaligned"));
  CHECK_FALSE(tx::is_known_class("segfault"));
}

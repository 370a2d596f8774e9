// build_info: the facts report.tool carries, as configured by CMake.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <set>

#include "util/build_info.h"

using cudadiag::build_info;

TEST_CASE("build_info architectures are sm_NN / compute_NN, without duplicates", "[build_info]") {
  const auto& archs = build_info().architectures;
  REQUIRE_FALSE(archs.empty());
  const std::regex name("^(sm|compute)_[0-9]+[a-z]?$");
  for (const auto& a : archs) {
    INFO(a);
    CHECK(std::regex_match(a, name));
  }
  CHECK(std::set<std::string>(archs.begin(), archs.end()).size() == archs.size());
  // Something runs on the hardware the tool targets: real code or PTX for at least one.
  CHECK(std::any_of(archs.begin(), archs.end(), [](const std::string& a) { return a.rfind("sm_", 0) == 0; }));
}

TEST_CASE("build_info version, revision and toolkit are filled", "[build_info]") {
  const auto& b = build_info();
  CHECK(std::regex_match(b.version, std::regex("^[0-9]+\\.[0-9]+\\.[0-9]+$")));
  // A short commit id, "-dirty" when tracked files had uncommitted changes; "unknown"
  // only for a build outside git.
  CHECK(std::regex_match(b.git_revision, std::regex("^([0-9a-f]{12}(-dirty)?|unknown)$")));
  CHECK(std::regex_match(b.cuda_toolkit, std::regex("^[0-9]+\\.[0-9]+(\\.[0-9]+)?$")));
}

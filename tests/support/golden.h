#pragma once
// Golden outputs: a test's output compared byte for byte with the file recorded in the
// repository; CUDADIAG_UPDATE_GOLDEN=1 records it instead (review the diff).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "tests/support/file_bytes.h"

namespace cudadiag::test {

inline void check_golden(const std::filesystem::path& golden, const std::string& got) {
  INFO(golden.string());
  if (std::getenv("CUDADIAG_UPDATE_GOLDEN")) {
    spit(golden, got);
    REQUIRE(slurp(golden) == got);
    return;
  }
  REQUIRE(std::filesystem::exists(golden));
  const std::string want = slurp(golden);
  if (want != got) {
    // The first differing line, for a readable failure.
    std::istringstream a(want), b(got);
    std::string la, lb;
    for (int line = 1;; ++line) {
      const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
      if (!ga && !gb) break;
      if (!ga || !gb || la != lb) {
        INFO("line " << line << "\nrecorded: " << la << "\nnow:      " << lb);
        CHECK(want == got);
        return;
      }
    }
  }
  CHECK(want == got);
}

}  // namespace cudadiag::test

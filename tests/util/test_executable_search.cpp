#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

#include "tests/support/temp_dir.h"
#include "util/executable_search.h"

using cudadiag::is_executable_file;
using cudadiag::split_search_path;

TEST_CASE("search path: empty entries are skipped, order kept") {
  CHECK(split_search_path("/a::/b:") == std::vector<std::string>{"/a", "/b"});
  CHECK(split_search_path("").empty());
}

TEST_CASE("executable file: a regular file with x, not a directory or a plain file") {
  cudadiag::test::TempDir dir;
  const auto tool = dir.path / "tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  CHECK_FALSE(is_executable_file(tool.string()));
  REQUIRE(::chmod(tool.c_str(), 0755) == 0);
  CHECK(is_executable_file(tool.string()));
  CHECK_FALSE(is_executable_file(dir.path.string()));
  CHECK_FALSE(is_executable_file((dir.path / "missing").string()));
}

// `cudadiag run`'s own text on this machine (no GPU needed): what a person reads first.
#include <catch2/catch.hpp>

#include <regex>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;

TEST_CASE("a plain non-zero exit reads 'exited N', never 'crashed'", "[text][run]") {
  TempDir dir;
  const Run r = run_binary({"run", "--rungs", "native", "--", "sh", "-c", "exit 3"}, dir.path);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(std::regex_search(r.out, std::regex("\nprogram\\.native +exited 3 ")));
  CHECK(r.out.find("program.native [native]: exited 3") != std::string::npos);
  CHECK(r.out.find("crashed") == std::string::npos);
}

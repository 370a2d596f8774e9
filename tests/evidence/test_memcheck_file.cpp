// memcheck's XML read once for repro and run: the report, or why there is none in the
// same words for both commands.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "evidence/memcheck_file.h"

using namespace cudadiag;

TEST_CASE("memcheck file: parsed, missing, or unreadable", "[evidence]") {
  const std::string good = std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml";
  const auto f = evidence::read_memcheck_file(good);
  REQUIRE(f.report);
  CHECK_FALSE(f.report->findings.empty());
  CHECK(evidence::problem_text(f, good).empty());

  const std::string none = "/nonexistent/cudadiag/memcheck.xml";
  const auto m = evidence::read_memcheck_file(none);
  CHECK(m.missing);
  CHECK_FALSE(m.report);
  CHECK(evidence::problem_text(m, none) == "compute-sanitizer wrote no XML (/nonexistent/cudadiag/memcheck.xml)");

  char path[] = "/tmp/cudadiag-memcheck-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << "<ComputeSanitizerOutput><Record>";
  const auto u = evidence::read_memcheck_file(path);
  CHECK_FALSE(u.missing);
  CHECK_FALSE(u.report);
  CHECK_THAT(evidence::problem_text(u, path), Catch::StartsWith(std::string(path) + ": unreadable XML: "));
  std::remove(path);
}

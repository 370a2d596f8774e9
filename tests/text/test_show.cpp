// `cudadiag show` prints a saved report as the command that wrote it does.
#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;

TEST_CASE("show prints a saved compare report as compare itself does", "[text][show]") {
  TempDir dir;
  const std::string cmp = (source_dir() / "tests/fixtures/compare").string();
  const std::string saved = (dir.path / "cmp.json").string();
  const std::vector<std::string> inputs{cmp + "/device_h100.json", cmp + "/device_h200.json"};
  std::vector<std::string> args{"compare"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  const Run text = run_binary(args, dir.path);
  args.insert(args.end(), {"-o", saved});
  const Run written = run_binary(args, dir.path);
  REQUIRE(written.code == text.code);
  const Run shown = run_binary({"show", saved}, dir.path);
  INFO(shown.err);
  REQUIRE(shown.code == 0);
  CHECK(shown.out == text.out);
  const Run md = run_binary({"show", "--format", "md", saved}, dir.path);
  CHECK(md.out.find("## cudadiag compare") != std::string::npos);
}

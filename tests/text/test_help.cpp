// --help for people: every subcommand's help fits 80 columns and ends with an example.
#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;

TEST_CASE("every --help fits 80 columns and shows an example", "[text][help]") {
  TempDir dir;
  const auto commands = listed_subcommands(dir.path);
  REQUIRE(commands.size() >= 12);
  std::vector<std::vector<std::string>> helps{{"--help"}};
  for (const auto& c : commands) helps.push_back({c, "--help"});
  for (const auto& args : helps) {
    const Run r = run_binary(args, dir.path);
    INFO("cudadiag " << args.front() << " --help\n" << r.out);
    CHECK(r.code == 0);
    const auto wide = wide_lines(r.out);
    CHECK(wide.empty());
    const auto example = r.out.find("Example");
    REQUIRE(example != std::string::npos);
    // The example is the help's last part, and names the command it is for.
    CHECK(r.out.find("\n  cudadiag " + (args.front() == "--help" ? std::string() : args.front()), example) !=
          std::string::npos);
  }
}

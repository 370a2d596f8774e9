// One naming and unit rule for the options commands share (apps/cudadiag/cli_common.h):
// --timeout in seconds, --repeat with one cap, --seed wherever inputs are drawn, and
// family names with '-' or '_'. Old spellings keep working with one deprecation line.
#include <catch2/catch.hpp>

#include <regex>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;

namespace {
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("timeouts are seconds, repeats share one cap, no option counts milliseconds", "[text][options]") {
  TempDir dir;
  for (const auto& c : listed_subcommands(dir.path)) {
    const Run r = run_binary({c, "--help"}, dir.path);
    INFO(c << " --help\n" << r.out);
    CHECK(r.out.find("-ms ") == std::string::npos);
    CHECK(r.out.find("-ms=") == std::string::npos);
    if (r.out.find("--repeat") != std::string::npos) CHECK(r.out.find("--repeat N") != std::string::npos);
    if (r.out.find("--timeout") != std::string::npos) CHECK(r.out.find("--timeout SECONDS") != std::string::npos);
  }
  for (const std::string c : {"fault", "index-select", "attention", "repro", "run"}) {
    const std::vector<std::string> before = c == "fault" ? std::vector<std::string>{"fault", "oob-write"}
                                                          : std::vector<std::string>{c};
    auto args = before;
    args.push_back("--repeat=1000001");
    if (c == "run") args.insert(args.end(), {"--", "true"});
    const Run r = run_binary(args, dir.path);
    INFO(c << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("--repeat: expected a whole number in 1..1000000") != std::string::npos);
  }
  for (const std::string c : {"fault", "index-select", "attention", "repro", "tma", "run"}) {
    const Run r = run_binary({c, "--help"}, dir.path);
    INFO(c);
    CHECK(r.out.find("--timeout SECONDS") != std::string::npos);
  }
}

TEST_CASE("every command that draws random inputs takes --seed", "[text][options]") {
  TempDir dir;
  for (const std::string c : {"fault", "index-select", "attention", "repro"}) {
    const Run help = run_binary({c, "--help"}, dir.path);
    INFO(c);
    CHECK(help.out.find("--seed SEED") != std::string::npos);
    auto args = c == "fault" ? std::vector<std::string>{"fault", "oob-write"} : std::vector<std::string>{c};
    args.push_back("--seed=0xZZ");
    const Run bad = run_binary(args, dir.path);
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--seed: '0xZZ' is not a seed") != std::string::npos);
  }
  // Accepted: what stops index-select here is the missing GPU (3), never the option (2).
  const Run r = run_binary({"index-select", "--seed", "7", "--repeat", "2"}, dir.path);
  INFO(r.err);
  CHECK(r.code != 2);
}

TEST_CASE("family names take '-' or '_'", "[text][options]") {
  TempDir dir;
  const Run dash = run_binary({"list", "--kernel", "index-select"}, dir.path);
  const Run under = run_binary({"list", "--kernel", "index_select"}, dir.path);
  INFO(dash.err);
  CHECK(dash.code == 0);
  CHECK(under.code == 0);
  CHECK(dash.out == under.out);
  CHECK(dash.out.find("index_select.") != std::string::npos);
}

TEST_CASE("the old --deadline-ms still works, in seconds now, with one deprecation line", "[text][options]") {
  TempDir dir;
  const Run r = run_binary({"repro", "--deadline-ms", "5000", "--case", "tma.*", "-o", (dir.path / "r.json").string()},
                           dir.path);
  INFO(r.err);
  CHECK(r.code != 2);
  CHECK(count(r.err, "--deadline-ms is deprecated: use --timeout") == 1);
  const Run bad = run_binary({"repro", "--deadline-ms=0"}, dir.path);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--deadline-ms: expected a whole number in 1..3600000, got '0'") != std::string::npos);
}

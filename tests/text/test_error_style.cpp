// One style for bad input, whoever finds it (the option parser, a command's own checks,
// an unknown subcommand): one line on stderr, "cudadiag <command>: <what is wrong>",
// and exit 2.
#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;

namespace {

struct BadInput {
  std::vector<std::string> args;
  std::string says;  // part of what is wrong
};

}  // namespace

TEST_CASE("every bad-input message reads 'cudadiag <command>: <what is wrong>', exit 2", "[text][errors]") {
  TempDir dir;
  const std::string src = source_dir().string();
  const std::vector<BadInput> cases = {
      {{"nosuchcommand"}, "unknown subcommand 'nosuchcommand'"},
      {{"env", "--no-such-flag"}, "--no-such-flag"},
      {{"env", "--xid-tail", "-1"}, "--xid-tail: expected a whole number"},
      {{"schema", "--format", "yaml"}, "--format"},
      {{"list", "--kernel", "nope"}, "--kernel: unknown family 'nope'"},
      {{"fault", "nope"}, "unknown case 'nope'"},
      {{"fault", "oob-write", "-k", "5000"}, "-k: expected a whole number in 1..1024"},
      {{"index-select", "--shape", "1,2"}, "'1,2' must be four comma-separated sizes"},
      {{"attention", "--sweep", "--block-m", "64"}, "--block-m picks one tile"},
      {{"attention", "--sweep-filter", "warps=4"}, "--sweep-filter needs --sweep"},
      {{"tma", "--host-only", "--dtype", "nope", "--dims", "64", "--box", "64"}, "nope"},
      {{"repro", "--case", "nonesuch"}, "--case 'nonesuch' matches no case"},
      {{"repro", "--profiles", "nope"}, "--profiles"},
      {{"compare"}, "reports is required"},
      {{"compare", src + "/tests/fixtures/compare/truncated.json", src + "/tests/fixtures/compare/flaky_a.json"},
       "truncated.json"},
      {{"run", "--repeat=0", "--", "true"}, "--repeat: expected a whole number in 1..1000000"},
      {{"run", "--", "/no/such/program"}, "/no/such/program"},
      {{"coredump", "/etc/hostname"}, "/etc/hostname"},
      {{"show", "/no/such/report.json"}, "/no/such/report.json"},
  };
  for (const auto& c : cases) {
    const Run r = run_binary(c.args, dir.path);
    std::string cmd;
    for (const auto& a : c.args) cmd += " " + a;
    INFO("cudadiag" << cmd << ": exit " << r.code << "\nstderr:\n" << r.err);
    CHECK(r.code == 2);
    const std::string command = c.args.front() == "nosuchcommand" ? "" : " " + c.args.front();
    // The message is a line of its own that starts with the program and the command.
    const std::string head = "cudadiag" + command + ": ";
    const auto at = r.err.find(head);
    REQUIRE(at != std::string::npos);
    CHECK((at == 0 || r.err[at - 1] == '\n'));
    const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
    CHECK(line.find(c.says) != std::string::npos);
    // Said once, not "cudadiag fault: fault: ...".
    CHECK(line.find(c.args.front() + ": " + c.args.front() + ":") == std::string::npos);
    CHECK(line.find("[error]") == std::string::npos);
    CHECK(r.err.find("Run with --help") == std::string::npos);
  }
}

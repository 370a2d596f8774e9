// Every numeric option of every subcommand, through the real binary: NaN, infinities,
// negatives, words and values past the range the command can honour end with exit 2
// and a message naming the option, the accepted range and the value given; nothing runs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "run_binary.h"
#include "tests/support/temp_dir.h"

using cudadiag::test::run_binary;
using cudadiag::test::TempDir;

namespace {

struct NumericOption {
  std::vector<std::string> before;  // the subcommand and what it needs before the option
  std::string option;
  std::string range;                // as the message states it
  std::vector<std::string> beyond;  // values just outside the range (besides nan, inf, words)
  std::vector<std::string> after;   // what the command needs after the option
};

const std::string kInt = "2147483647";
const std::string kLong = "9223372036854775807";
const std::string kU64 = "18446744073709551615";
const std::string kU32 = "4294967295";

const std::vector<NumericOption>& numeric_options() {
  static const std::vector<NumericOption> table = {
      // run: the interposer's own maximum for the quarantine (lib/fence/interposer_limits.h).
      {{"run"}, "--repeat", "1..1000000", {"0", "1000001"}, {"--", "true"}},
      {{"run"}, "--timeout", "above 0 up to 10000000", {"0", "-1", "1e8"}, {"--", "true"}},
      {{"run"}, "--fence-align", "1..4096", {"0", "8192"}, {"--", "true"}},
      {{"run"}, "--fence-quarantine-mb", "0..16777216", {"-1", "16777217", "20000000"}, {"--", "true"}},
      // attention
      {{"attention"}, "--batch", "1.." + kInt, {"0", "2147483648"}, {}},
      {{"attention"}, "--heads", "1.." + kInt, {"0", "-3"}, {}},
      {{"attention"}, "--seq-len", "1.." + kInt, {"0", "99999999999"}, {}},
      {{"attention"}, "--head-dim", "1.." + kInt, {"0"}, {}},
      {{"attention"}, "--block-m", "1.." + kInt, {"0"}, {}},
      {{"attention"}, "--block-n", "1.." + kInt, {"-64"}, {}},
      {{"attention"}, "--warps", "1.." + kInt, {"0"}, {}},
      {{"attention"}, "--misalign-bytes", "0.." + kInt, {"-1", "2147483648"}, {}},
      {{"attention"}, "--repeat", "1..1000000", {"0", "1000001"}, {}},
      {{"attention"}, "--jobs", "1..64", {"0", "65"}, {}},
      {{"attention"}, "--timeout", "in 1..86400", {"0.5", "86401"}, {}},
      {{"attention"}, "--race-window", "0..10000000", {"-1", "10000001"}, {}},
      {{"attention"}, "--race-rate", "in 0..1", {"-0.1", "1.5"}, {}},
      // compare: parsed before any report is read
      {{"compare"}, "--time-factor", "above 1 up to 1000000", {"1", "0.5", "2e6"}, {"a.json", "b.json"}},
      {{"compare"}, "--alpha", "above 0 and below 1", {"0", "1", "-0.5"}, {"a.json", "b.json"}},
      {{"compare"}, "--jobs", "0..256", {"-1", "257"}, {"a.json", "b.json"}},
      // env
      {{"env"}, "--probe-timeout", "in 1..3600", {"0", "3601"}, {}},
      {{"env"}, "--xid-tail", "0..10000", {"-1", "10001"}, {}},
      // fault: the catalog's limits
      {{"fault", "fault.oob-write"}, "--repeat", "1..1000000", {"0", "1000001"}, {}},
      {{"fault", "fault.oob-write"}, "-k", "1..1024", {"0", "1025"}, {}},
      {{"fault", "fault.oob-write"}, "--elements", "64..268435456", {"63", "268435457"}, {}},
      {{"fault", "fault.oob-write"}, "--timeout", "in 1..86400", {"0", "86401"}, {}},
      // index-select (the shape bounds them further)
      {{"index-select"}, "--dilation", "1.." + kLong, {"0", "9223372036854775808"}, {}},
      {{"index-select"}, "--offset", "0.." + kLong, {"-1"}, {}},
      {{"index-select"}, "--repeat", "1..1000000", {"0", "1000001"}, {}},
      {{"index-select"}, "--timeout", "in 1..86400", {"0", "86401"}, {}},
      // repro
      {{"repro"}, "--jobs", "1..1024", {"0", "1025"}, {}},
      {{"repro"}, "--repeat", "1..1000000", {"0", "1000001"}, {}},
      {{"repro"}, "--timeout", "in 0.001..3600", {"0", "3601"}, {}},
      {{"repro"}, "--deadline-ms", "1..3600000", {"0", "3600001"}, {}},
      // tma: the driver's argument types; the validator judges the descriptor
      {{"tma", "--host-only"}, "--dims", "0.." + kU64, {"-1", "18446744073709551616"}, {}},
      {{"tma", "--host-only"}, "--strides", "0.." + kU64, {"-2"}, {}},
      {{"tma", "--host-only"}, "--box", "0.." + kU32, {"-1", "4294967296"}, {}},
      {{"tma", "--host-only"}, "--element-strides", "0.." + kU32, {"4294967296"}, {}},
      {{"tma", "--host-only"}, "--seq-dim", "0..4", {"-1", "5"}, {}},
      {{"tma", "--host-only"}, "--heads-dim", "0..4", {"5"}, {}},
      {{"tma", "--host-only"}, "--target-cc", "0..999", {"-1", "1000"}, {}},
      {{"tma", "--host-only"}, "--timeout", "in 1..86400", {"0", "1e9"}, {}},
  };
  return table;
}

}  // namespace

TEST_CASE("numeric options refuse NaN, infinities and values out of range, naming option and range",
          "[hostile][numeric]") {
  TempDir dir;
  for (const auto& o : numeric_options()) {
    std::vector<std::string> bad = {"nan", "NaN", "inf", "-inf", "1e999", "twelve", "1x"};
    bad.insert(bad.end(), o.beyond.begin(), o.beyond.end());
    for (const auto& value : bad) {
      std::vector<std::string> args = o.before;
      // --option=value: a value such as "-inf" is never taken for another option.
      if (o.option.rfind("--", 0) == 0) {
        args.push_back(o.option + "=" + value);
      } else {
        args.push_back(o.option);
        args.push_back(value);
      }
      args.insert(args.end(), o.after.begin(), o.after.end());
      const auto r = run_binary(args, dir.path);
      const std::string said = r.out + r.err;
      INFO(o.before.front() << " " << o.option << " '" << value << "': exit " << r.code << "\n" << said);
      CHECK(r.exited);
      CHECK(r.code == 2);
      CHECK(said.find(o.option + ": expected ") != std::string::npos);
      CHECK(said.find(o.range) != std::string::npos);
      CHECK(said.find("got '" + value + "'") != std::string::npos);
    }
  }
}

TEST_CASE("numeric options take the ends of their ranges", "[hostile][numeric]") {
  TempDir dir;
  // Nothing past parsing fails here: programs that never use CUDA, the host-only TMA check.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--rungs", "native", "--timeout", "1e7", "--fence-quarantine-mb", "16777216",
                                 "--fence-align", "4096", "--repeat", "1", "--", "true"},
        std::vector<std::string>{"run", "--rungs", "native", "--timeout", "0.5", "--fence-quarantine-mb", "0", "--",
                                 "true"},
        std::vector<std::string>{"tma", "--host-only", "--dtype", "bf16", "--dims", "64,8", "--strides", "128", "--box",
                                 "64,8", "--target-cc", "90"}}) {
    const auto r = run_binary(args, dir.path);
    INFO(args.front() << ": exit " << r.code << "\n" << r.out << r.err);
    CHECK(r.exited);
    CHECK(r.code != 2);  // run without the fence rung is inconclusive (1); the TMA check passes (0)
    CHECK((r.out + r.err).find(": expected a") == std::string::npos);
  }
}

TEST_CASE("seeds refuse what is not a 64-bit number", "[hostile][numeric]") {
  TempDir dir;
  for (const std::string value : {"nan", "inf", "-1", "18446744073709551616", "0xZZ"}) {
    const auto r = run_binary({"fault", "fault.oob-write", "--seed=" + value}, dir.path);
    INFO("--seed '" << value << "': exit " << r.code << "\n" << r.out << r.err);
    CHECK(r.code == 2);
    CHECK((r.out + r.err).find("--seed: '" + value + "' is not a seed") != std::string::npos);
  }
}

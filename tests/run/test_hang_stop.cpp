// A hang costs one timeout: once a run's dump names where the hang's warps wait, the
// rungs above do not run unless asked for, and the verdict stays a GPU hang that names
// the kernel and the line.
#include <catch2/catch.hpp>

#include <algorithm>

#include "run/hang_stop.h"
#include "run/run_verdict.h"
#include "run_fixtures.h"

using namespace cudadiag;
using namespace cudadiag::run;
using namespace cudadiag::run::testing;

namespace {

// What the dump of tests/coredump/data/hang.nvcudmp gives, as the report carries it.
report::FaultSite waiting_site_of_hang() {
  report::FaultSite s;
  s.dump = "core-native-0_42.nvcudmp";
  report::WaitingPc w;
  w.kernel = "wait_flag(int volatile*)";
  w.function = "wait_flag(int volatile*)";
  w.file = "/tmp/src/hang.cu";
  w.line = 4;
  w.warps = 1;
  w.lanes = 32;
  s.kernel = w.kernel;
  s.waiting.push_back(w);
  return s;
}

RunJudgement timed_out(Rung rung, std::vector<report::FaultSite> sites) {
  RunObservation o;
  o.rung = rung;
  o.child.ending = runner::Ending::timeout;
  o.child.signal = 15;
  o.child.signal_name = "SIGTERM";
  RunJudgement j = judge_run(o);
  j.sites = std::move(sites);
  return j;
}

}  // namespace

TEST_CASE("hang stop: a timed-out run whose dump names kernel and line is a named hang") {
  const auto j = timed_out(Rung::native, {waiting_site_of_hang()});
  REQUIRE(j.outcome == RunOutcome::timeout);
  CHECK(named_hang(j) == "wait_flag(int volatile*) at /tmp/src/hang.cu:4 (1 of 1 warp there)");

  RunOptions opts;
  const auto reason = hang_stop_reason(j, opts);
  CHECK_THAT(reason, Catch::StartsWith("the hang is named (wait_flag(int volatile*) at /tmp/src/hang.cu:4"));
  CHECK_THAT(reason, Catch::EndsWith("(--rungs or --sanitize always runs them)"));
  opts.rungs_asked = true;  // --rungs given, or --sanitize always
  CHECK(hang_stop_reason(j, opts).empty());
}

TEST_CASE("hang stop: no stop without a timeout, without a dump, or without a line") {
  RunOptions opts;
  CHECK(named_hang(timed_out(Rung::native, {})).empty());  // no dump (--no-coredump, or none written)

  auto no_line = waiting_site_of_hang();
  no_line.waiting[0].line.reset();
  no_line.waiting[0].file.clear();
  CHECK(named_hang(timed_out(Rung::native, {no_line})).empty());  // built without -lineinfo: not named

  auto unreadable = waiting_site_of_hang();
  unreadable.unreadable = "truncated";
  CHECK(named_hang(timed_out(Rung::native, {unreadable})).empty());

  auto crashed = judge_run(killed(Rung::native, 11, "SIGSEGV"));
  crashed.sites = {waiting_site_of_hang()};
  CHECK(named_hang(crashed).empty());
  CHECK(hang_stop_reason(crashed, opts).empty());
}

TEST_CASE("hang stop: the verdict is a GPU hang naming kernel and line first, and says the rungs above did not run") {
  const auto j = timed_out(Rung::native, {waiting_site_of_hang()});
  RunOptions opts;
  const std::string reason = hang_stop_reason(j, opts);
  std::vector<SkippedRung> skipped;
  for (Rung r : {Rung::blocking, Rung::fence, Rung::fence_front, Rung::sanitizer}) skipped.push_back({r, reason, true});
  const auto v = decide_run_verdict({j}, skipped);
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(exit_code_of(v) == 1);
  REQUIRE(v.first_exposed_by);
  CHECK(*v.first_exposed_by == Rung::native);
  CHECK_THAT(v.reason, Catch::StartsWith("a GPU hang: native: a kernel never finished: its warps wait in "
                                         "wait_flag(int volatile*) at /tmp/src/hang.cu:4"));
  CHECK_THAT(v.reason, Catch::EndsWith("; the rungs above were not run: the hang is named"));
  // The four rungs skipped for the one reason share one note.
  const auto note = std::find_if(v.notes.begin(), v.notes.end(), [](const std::string& n) {
    return n.find("did not run") != std::string::npos;
  });
  REQUIRE(note != v.notes.end());
  CHECK(*note == "blocking, fence, fence-front, sanitizer did not run: " + reason);
  CHECK(std::count_if(v.notes.begin(), v.notes.end(),
                      [](const std::string& n) { return n.find("did not run") != std::string::npos; }) == 1);
}

TEST_CASE("hang stop: a hang the fence saw but no dump named stays as it was") {
  auto j = timed_out(Rung::fence, {});
  j.hang = HangFinding{"spin(int*)", 3, "the launch of spin(int*) (#3) never returned", ""};
  const auto v = decide_run_verdict({j}, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(v.reason == "a GPU hang: fence: the launch of spin(int*) (#3) never returned");
}

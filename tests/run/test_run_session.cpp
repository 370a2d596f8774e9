// run_session with real children: shell commands, the real interposer on programs that
// never use CUDA, and the interposer on a fake driver (tests/interposer/fake_driver)
// whose "device memory" is host memory, so that a guard is a real unmapped page.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#include <atomic>
#include <fstream>
#include <regex>
#include <thread>

#include "run/run_report.h"
#include "run/run_session.h"
#include "report/render.h"
#include "report/schema.h"
#include "ring_fixture.h"

using namespace cudadiag;
using namespace cudadiag::run;
using namespace std::chrono_literals;

namespace {

SessionOptions options(const test::TempDir& dir, std::vector<std::string> command, const std::string& rungs) {
  SessionOptions o;
  o.run.command = std::move(command);
  o.run.rungs = parse_rungs(rungs);
  o.run.work_dir = (dir / "work").string();
  std::filesystem::create_directories(o.run.work_dir);
#ifdef INTERPOSER
  o.run.interposer_path = INTERPOSER;
#else
  o.run.interposer_missing_reason = "not built on this architecture";
#endif
  o.run.sanitizer_missing_reason = "no compute-sanitizer in the tests";
  o.timeout = 20s;
  o.grace = 1s;
  o.kernel_log.clear();
  return o;
}

std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

const SkippedRung* skipped(const SessionOutcome& o, Rung r) {
  for (const auto& s : o.skipped)
    if (s.rung == r) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("session: the child's spec: environment layers, no result pipe, deadlines", "[run_session]") {
  SessionOptions o;
  o.env = {{"MY_VAR", "x"}, {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}, {"CUDA_LAUNCH_BLOCKING", "0"}};
  o.timeout = 100s;
  o.sanitizer_timeout_factor = 10;
  PlannedRun native;
  native.rung = Rung::native;
  native.argv = {"/usr/bin/python3", "train.py"};
  native.env_unset = {"CUDADIAG_RING"};
  auto spec = child_spec_for(native, o);
  CHECK(spec.argv == native.argv);
  CHECK_FALSE(spec.result_pipe);
  CHECK(spec.env_set.at("MY_VAR") == "x");
  CHECK(spec.env_set.at("CUDA_LAUNCH_BLOCKING") == "0");  // the user's, where the rung sets nothing
  CHECK(spec.deadline == 100s);

  PlannedRun blocking = native;
  blocking.rung = Rung::blocking;
  blocking.env_set = {{"CUDA_LAUNCH_BLOCKING", "1"}};
  blocking.env_unset = {"PYTORCH_CUDA_ALLOC_CONF"};
  spec = child_spec_for(blocking, o);
  CHECK(spec.env_set.at("CUDA_LAUNCH_BLOCKING") == "1");  // the rung's meaning holds
  CHECK(spec.env_set.count("PYTORCH_CUDA_ALLOC_CONF") == 0);
  CHECK(spec.env_unset == std::vector<std::string>{"PYTORCH_CUDA_ALLOC_CONF"});

  PlannedRun san = native;
  san.rung = Rung::sanitizer;
  CHECK(child_spec_for(san, o).deadline == 1000s);
}

TEST_CASE("session: kernel-log lines of a run: its pids, and pid-less lines while a failing run ran", "[run_session]") {
  const auto line = [](std::uint64_t seq, std::uint64_t us, const std::string& text) {
    auto e = host::parse_xid_line("4," + std::to_string(seq) + "," + std::to_string(us) + ",c;" + text);
    REQUIRE(e);
    return *e;
  };
  const std::vector<host::XidEvent> events{
      line(10, 5'000'000, "NVRM: Xid (PCI:0000:00:06): 31, pid=111, name=python3, channel 0x0000000a, intr "
                          "00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_8 faulted @ 0x8026_6be00000. "
                          "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"),
      line(11, 5'000'100, "NVRM: Xid (PCI:0000:00:06): 13, Graphics SM Warp Exception on (GPC 1, TPC 4, SM 0): "
                          "Misaligned Address"),
      line(12, 5'000'200, "NVRM: Xid (PCI:0000:00:06): 43, pid=222, name=python3, channel 0x0000000a"),
      line(13, 5'000'300, "NVRM: Xid (PCI:0000:00:06): 43, pid=999, name=other, channel 0x0000000a"),
      line(14, 90'000'000, "NVRM: Xid (PCI:0000:00:06): 13, Graphics Exception: long after"),
  };
  const auto got = xid_lines_of_run(events, {111, 222}, 4'000'000, 6'000'000, /*failed=*/true);
  REQUIRE(got.size() == 3);  // 31 of 111, the pid-less 13 once, 43 of 222; not 999's, not the late one
  CHECK(got[0].seq == 10u);
  CHECK(got[1].seq == 11u);
  CHECK(got[2].seq == 12u);
  CHECK(got[0].mmu_fault->address == 0x80266be00000ull);
  // A run that ended without failing gets only the lines naming its pids, as a repro child does.
  const auto clean = xid_lines_of_run(events, {111, 222}, 4'000'000, 6'000'000, /*failed=*/false);
  REQUIRE(clean.size() == 2);
  CHECK(clean[0].seq == 10u);
  CHECK(clean[1].seq == 12u);
}

TEST_CASE("session: the environment each rung gives the program", "[run_session]") {
  test::TempDir dir;
  auto o = options(dir, sh("echo \"[$CUDA_LAUNCH_BLOCKING/$PYTORCH_NO_CUDA_MEMORY_CACHING/$MY_VAR/"
                           "${CUDADIAG_RESULT_FD-none}/${PYTORCH_CUDA_ALLOC_CONF-unset}]\""),
                   "native,blocking");
  o.env = parse_env_assignments({"MY_VAR=x=y", "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync"});
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 2);
  CHECK(out.runs[0].observation.child.out.text() == "[//x=y/none/backend:cudaMallocAsync]\n");
  CHECK(out.runs[1].observation.child.out.text() == "[1/1/x=y/none/unset]\n");
  CHECK(out.runs[0].judgement.outcome == RunOutcome::clean);
  // No fence and no sanitizer: nothing could have seen a silent overrun.
  CHECK(out.verdict.kind == VerdictKind::inconclusive);
  CHECK_THROWS_WITH(parse_env_assignments({"1BAD=x"}), Catch::Contains("--env") && Catch::Contains("1BAD=x"));
  CHECK_THROWS_WITH(parse_env_assignments({"NOVALUE"}), Catch::Contains("NOVALUE"));
}

TEST_CASE("session: a CUDA error in the output exposes the fault; --stop-at-first ends the ladder", "[run_session]") {
  test::TempDir dir;
  auto o = options(dir, sh("echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2; exit 1"),
                   "native,blocking,fence");
  o.run.stop_at_first = true;
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 1);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::cuda_error);
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK(exit_code_of(out.verdict) == 1);
  REQUIRE(out.verdict.first_exposed_by);
  CHECK(*out.verdict.first_exposed_by == Rung::native);
  REQUIRE(skipped(out, Rung::blocking));
  CHECK(skipped(out, Rung::blocking)->reason == "--stop-at-first: the native rung failed");
  REQUIRE(skipped(out, Rung::fence));

  // --sanitize auto wants memcheck now; without compute-sanitizer the rung says why.
  o.run.stop_at_first = false;
  o.run.rungs = parse_rungs("native,sanitizer");
  const auto wanted = run_session(o);
  REQUIRE(skipped(wanted, Rung::sanitizer));
  CHECK(skipped(wanted, Rung::sanitizer)->reason == "no compute-sanitizer in the tests");
}

TEST_CASE("session: dumps armed (the default): a clean program runs once per rung and never again, a failing rung "
          "once more", "[run_session]") {
  test::TempDir dir;
  auto o = options(dir, sh("exit 0"), "native,blocking");
  REQUIRE(o.run.coredump);  // the ladder's default, as the command's
  int started = 0, site_runs = 0;
  SessionProgress progress;
  progress.started = [&started](const PlannedRun&) { ++started; };
  progress.site_run = [&site_runs](const PlannedRun&) { ++site_runs; };
  auto out = run_session(o, progress);
  CHECK(out.runs.size() == 2);
  CHECK(started == 2);
  CHECK(site_runs == 0);

  o.run.command = sh("echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2; exit 1");
  started = site_runs = 0;
  out = run_session(o, progress);
  CHECK(out.runs.size() == 2);
  CHECK(started == 2);
  CHECK(site_runs == 2);  // each failing rung once more, armed

  o.run.coredump = false;  // --no-coredump
  started = site_runs = 0;
  out = run_session(o, progress);
  CHECK(started == 2);
  CHECK(site_runs == 0);
}

TEST_CASE("session: a command that cannot start stops the ladder", "[run_session]") {
  test::TempDir dir;
  auto out = run_session(options(dir, {"/nonexistent/cudadiag-program"}, "native,blocking"));
  REQUIRE(out.runs.size() == 1);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::does_not_start);
  CHECK(out.verdict.kind == VerdictKind::does_not_start);
  CHECK(exit_code_of(out.verdict) == 2);
  REQUIRE(skipped(out, Rung::blocking));
  CHECK(skipped(out, Rung::blocking)->reason == "the command did not start");

  // A script whose command is missing: the shell's exit 127.
  out = run_session(options(dir, sh("no-such-command-cudadiag"), "native,blocking"));
  CHECK(out.verdict.kind == VerdictKind::does_not_start);
}

TEST_CASE("session: a stop request ends the running child and keeps it apart", "[run_session]") {
  test::TempDir dir;
  std::atomic<bool> stop{false};
  auto o = options(dir, sh("echo started; sleep 30"), "native,blocking");
  o.stop = &stop;
  o.stop_grace = 100ms;
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = run_session(o);
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  CHECK(out.stopped);
  CHECK(out.runs.empty());
  REQUIRE(out.interrupted.size() == 1);
  CHECK(out.interrupted[0].child.out.text() == "started\n");
  REQUIRE(skipped(out, Rung::native));
  CHECK(skipped(out, Rung::native)->reason == "interrupted");
  REQUIRE(skipped(out, Rung::blocking));

  // The report keeps the cut run as skipped, marked interrupted, exit 1.
  run::RunFacts facts;
  const auto r = run_report(report::new_report({"cudadiag", "run"}, "run"), o, out, facts);
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].outcome == report::Outcome::skipped);
  CHECK_THAT(r.results[0].reason, Catch::StartsWith("interrupted"));
  CHECK(r.invocation.interrupted == true);
  CHECK(exit_code_of(out.verdict, out.stopped) == 1);

  // Stopped before anything started: nothing runs.
  stop = true;
  const auto none = run_session(o);
  CHECK(none.runs.empty());
  CHECK(none.interrupted.empty());
  CHECK(none.stopped);
}

TEST_CASE("session: a long --repeat series keeps the output of the runs the report shows only", "[run_session]") {
  test::TempDir dir;
  const std::string counter = (dir / "count").string();
  // 40 runs, each printing 64 KiB on both streams; run #3 (0-based) fails.
  auto o = options(dir, sh("n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n+1)) > " + counter +
                           "; head -c 65536 /dev/zero | tr '\\0' x; head -c 65536 /dev/zero | tr '\\0' y >&2; "
                           "echo; echo \"run $n\"; [ $n -ne 3 ]"),
                   "native");
  o.run.repeat = 40;
  o.capture_limit = 1 << 20;  // nothing dropped by the capture itself
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 40);
  std::size_t kept = 0, kept_bytes = 0;
  for (const auto& r : out.runs) {
    const auto& c = r.observation.child;
    const std::size_t bytes = c.out.head.size() + c.out.tail.size() + c.err.head.size() + c.err.tail.size();
    kept_bytes += bytes;
    if (bytes > 0) ++kept;
    CHECK(r.observation_dropped == (bytes == 0));
    CHECK(r.observation.child.wall_ms > 0);  // durations stay
  }
  CHECK(kept <= 2);
  CHECK(kept_bytes <= 2 * 2 * (65536 + 64));
  // Kept: the first failing run (#3) and the latest (#39).
  CHECK_FALSE(out.runs[3].observation_dropped);
  CHECK_FALSE(out.runs[39].observation_dropped);
  CHECK_THAT(out.runs[3].observation.child.out.text(), Catch::Contains("run 3"));
  // Every run is still counted and judged.
  REQUIRE(out.verdict.rungs.size() == 1);
  CHECK(out.verdict.rungs[0].runs == 40);
  CHECK(out.verdict.rungs[0].failures == 1);

  // The report shows the first failing run, with its output, and counts all 40.
  run::RunFacts facts;
  const auto r = run_report(report::new_report({"cudadiag", "run"}, "run"), o, out, facts);
  const auto j = report::to_json(r);
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["details"]["shown_repeat"] == 3);
  CHECK(j["results"][0]["repeats"]["runs"] == 40);
  CHECK(j["results"][0]["details"]["runs"].size() == 40);
  CHECK_THAT(j["results"][0]["child"]["stdout"]["text"].get<std::string>(), Catch::Contains("run 3"));
}

TEST_CASE("session: a descendant in a session of its own ends with the run's deadline and the report names it",
          "[run_session]") {
  test::TempDir dir;
  auto o = options(dir, sh("setsid sleep 60 & echo \"escaped $!\"; sleep 60"), "native");
  o.timeout = 500ms;
  o.grace = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = run_session(o);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  REQUIRE(out.runs.size() == 1);
  const auto& child = out.runs[0].observation.child;
  CHECK(child.ending == runner::Ending::timeout);
  const std::string text = child.out.text();
  const auto at = text.find("escaped ");
  REQUIRE(at != std::string::npos);
  const pid_t escaped = static_cast<pid_t>(std::atoi(text.c_str() + at + 8));
  REQUIRE(escaped > 0);
  CHECK((::kill(escaped, 0) != 0 && errno == ESRCH));
  REQUIRE(child.strays.size() == 1);
  CHECK(child.strays[0].pid == escaped);
  CHECK(child.strays[0].command == "sleep");

  run::RunFacts facts;
  const auto j = report::to_json(run_report(report::new_report({"cudadiag", "run"}, "run"), o, out, facts));
  CHECK(report::validate_report(j).empty());
  const auto& strays = j["results"][0]["child"]["strays"];
  REQUIRE(strays.size() == 1);
  CHECK(strays[0]["pid"] == escaped);
  CHECK(strays[0]["command"] == "sleep");
  CHECK(strays[0]["note"] == "left the process group and session; killed at the end of the run");
}

#ifdef INTERPOSER
TEST_CASE("session: a program that never uses CUDA is clean under the real interposer", "[run_session]") {
  test::TempDir dir;
  auto o = options(dir, {"/bin/true"}, "native,blocking,fence,sanitizer");
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 3);
  const auto& fence = out.runs[2];
  CHECK(fence.judgement.rung == Rung::fence);
  REQUIRE(fence.observation.interposer);
  CHECK(fence.observation.interposer->summary.loaded);
  CHECK_FALSE(fence.observation.interposer->summary.cuda_seen);
  CHECK(fence.judgement.outcome == RunOutcome::clean);
  CHECK(fence.judgement.reason == "exited 0 and never used CUDA: nothing to fence");
  CHECK(out.verdict.kind == VerdictKind::clean);
  CHECK(exit_code_of(out.verdict) == 0);
  CHECK_THAT(out.verdict.reason, Catch::Contains("never used CUDA"));
  REQUIRE(skipped(out, Rung::sanitizer));  // not for want of compute-sanitizer: nothing was found
  CHECK(skipped(out, Rung::sanitizer)->reason == "--sanitize auto: no earlier rung found anything");
  CHECK(exit_code_of(out.verdict, out.stopped) == 0);

  // A shell script whose programs never use CUDA: the same.
  o.run.command = sh("true; echo done");
  CHECK(run_session(o).verdict.kind == VerdictKind::clean);

  // The report validates against the schema.
  run::RunFacts facts;
  const auto r = run_report(report::new_report({"cudadiag", "run", "--", "/bin/true"}, "run"), o, out, facts);
  const auto j = report::to_json(r);
  CHECK(report::validate_report(j).empty());
  CHECK(j["verdict"]["status"] == "clean");
  CHECK(j["run"]["fence"]["cuda_unused"] == true);
  // What memcheck would have run with, found or not.
  CHECK(j["run"]["sanitizer"]["padding_bytes"] == o.run.sanitizer_padding);
  CHECK(j["run"]["sanitizer"]["found"] == facts.sanitizer.found);
  REQUIRE(j["results"].size() == 3);
  CHECK(j["results"][2]["case_id"] == "program.fence");
  CHECK(j["results"][2]["kernel"] == "program");
}

TEST_CASE("session: a failing program that never uses CUDA is not exposed", "[run_session]") {
  test::TempDir dir;
  const auto out = run_session(options(dir, {"/bin/false"}, "native,blocking,fence"));
  REQUIRE(out.runs.size() == 3);
  CHECK(out.verdict.kind == VerdictKind::inconclusive);
  CHECK_THAT(out.verdict.reason, Catch::Contains("the program's own failure"));
}
#endif

TEST_CASE("session: a rung setting that breaks the program is found, named, and not run again above",
          "[run_session]") {
  test::TempDir dir;
  // Hangs after an error whenever PyTorch's caching allocator is off, as CUDA IPC does.
  auto o = options(dir,
                   sh("if [ \"$PYTORCH_NO_CUDA_MEMORY_CACHING\" = 1 ]; then "
                      "echo 'RuntimeError: invalid device pointer' >&2; sleep 30; fi; echo ok"),
                   "native,blocking,fence");
  o.timeout = 2s;
  o.grace = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = run_session(o);
  CHECK(std::chrono::steady_clock::now() - t0 < 12s);  // one deadline for the rung, one for the bisection
  REQUIRE(out.breaking.size() == 1);
  const auto& b = out.breaking[0];
  CHECK(b.rung == Rung::blocking);
  CHECK(b.setting.text == "PYTORCH_NO_CUDA_MEMORY_CACHING=1");
  CHECK(b.error_line == "RuntimeError: invalid device pointer");
  CHECK(b.bisect_runs == 2);  // CUDA_LAUNCH_BLOCKING=1 passed, then this one
  CHECK_THAT(b.text, Catch::StartsWith("PYTORCH_NO_CUDA_MEMORY_CACHING=1 breaks this program: "
                                       "`RuntimeError: invalid device pointer`"));
  REQUIRE(out.runs.size() >= 2);
  CHECK(out.runs[1].judgement.outcome == RunOutcome::timeout);
  CHECK(out.runs[1].judgement.broken_by == b.text);
  // The blocking rung ran once more without the setting.
  REQUIRE(out.runs.size() >= 3);
  CHECK(out.runs[2].judgement.rung == Rung::blocking);
  CHECK(out.runs[2].planned.env_set.count("PYTORCH_NO_CUDA_MEMORY_CACHING") == 0);
  CHECK(out.runs[2].judgement.outcome == RunOutcome::clean);
#ifdef INTERPOSER
  // The fence rung ran without the setting: it passed at once instead of waiting for its deadline.
  REQUIRE(out.runs.size() == 4);
  CHECK(out.runs[3].planned.env_set.count("PYTORCH_NO_CUDA_MEMORY_CACHING") == 0);
  CHECK(out.runs[3].judgement.outcome == RunOutcome::clean);
  CHECK_THAT(b.text, Catch::Contains("the fence rung runs without it; the blocking rung runs once more without it"));
  CHECK(out.verdict.kind == VerdictKind::clean);
#endif
  CHECK_THAT(out.verdict.reason, !Catch::Contains("the program's own failure"));
  CHECK(std::any_of(out.verdict.notes.begin(), out.verdict.notes.end(), [](const std::string& n) {
    return n.find("blocking: PYTORCH_NO_CUDA_MEMORY_CACHING=1 breaks this program") == 0 &&
           n.find("not the program's failure") != std::string::npos;
  }));
}

TEST_CASE("session: a setting that breaks a program before its own fault is found, and the rung runs again without it",
          "[run_session]") {
  test::TempDir dir;
  // Fails with its own CUDA error, unless PyTorch's caching allocator is off: then it stops
  // before reaching the fault, as a CUDA IPC hand-over does.
  auto o = options(dir,
                   sh("if [ \"$PYTORCH_NO_CUDA_MEMORY_CACHING\" = 1 ]; then "
                      "echo 'RuntimeError: invalid device pointer' >&2; exit 1; fi; "
                      "echo 'CUDA error: an illegal memory access was encountered' >&2; exit 1"),
                   "native,blocking");
  o.timeout = 10s;
  const auto out = run_session(o);
  REQUIRE(out.breaking.size() == 1);
  CHECK(out.breaking[0].rung == Rung::blocking);
  CHECK(out.breaking[0].setting.text == "PYTORCH_NO_CUDA_MEMORY_CACHING=1");
  REQUIRE(out.runs.size() == 3);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::cuda_error);
  CHECK_FALSE(out.runs[1].judgement.broken_by.empty());
  // Once more without it, the blocking rung reaches the program's own fault.
  CHECK(out.runs[2].planned.env_set.count("PYTORCH_NO_CUDA_MEMORY_CACHING") == 0);
  CHECK(out.runs[2].judgement.outcome == RunOutcome::cuda_error);
}

TEST_CASE("session: a rung below that failed without a CUDA error leaves the failure the program's", "[run_session]") {
  test::TempDir dir;
  auto o = options(dir, sh("echo 'plain failure' >&2; exit 3"), "native,blocking");
  o.timeout = 10s;
  const auto out = run_session(o);
  CHECK(out.breaking.empty());
  REQUIRE(out.runs.size() == 2);
  CHECK(out.runs[1].judgement.broken_by.empty());
}

#if defined(INTERPOSER) && defined(STATIC_RUNTIME) && defined(FAKE_DRIVER_DIR)
namespace {

// A stand-in compute-sanitizer: saves tests/data/sanitizer/<xml> where --save says, then
// runs the program.
std::string stand_in_sanitizer(const test::TempDir& dir, const std::string& xml) {
  const std::string tool = (dir / "compute-sanitizer").string();
  std::ofstream script(tool);
  script << "#!/bin/sh\nwhile [ \"$1\" != --save ]; do shift; done\ncp '" << CUDADIAG_TEST_DATA << "/sanitizer/" << xml
         << "' \"$2\"\nwhile [ \"$1\" != --print-limit ]; do shift; done\nshift 2\nexec \"$@\"\n";
  script.close();
  REQUIRE(::chmod(tool.c_str(), 0755) == 0);
  return tool;
}

// The probe of tests/interposer in `mode`, its libcuda the fake driver.
SessionOptions on_fake_driver(const test::TempDir& dir, const std::string& mode, const std::string& rungs) {
  auto o = options(dir, {STATIC_RUNTIME, mode}, rungs);
  o.env = {{"LD_LIBRARY_PATH", FAKE_DRIVER_DIR}};
  return o;
}

}  // namespace

TEST_CASE("session: a run far longer than the native run is ended as hung; its breaking setting is not waited on "
          "again",
          "[run_session]") {
  test::TempDir dir;
  // Waits forever whenever CUDA_LAUNCH_BLOCKING is set, as a CUDA IPC hand-over the tool
  // broke does.
  auto o = options(dir,
                   sh("if [ \"$CUDA_LAUNCH_BLOCKING\" = 1 ]; then "
                      "echo 'RuntimeError: invalid device pointer' >&2; sleep 30; fi; echo ok"),
                   "native,blocking");
  o.run.repeat = 3;
  o.run.coredump = false;
  o.timeout = 20s;
  o.grace = 300ms;
  o.hung_floor = 500ms;  // 60 s outside the tests
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = run_session(o);
  // Three native runs, one blocking run ended at the learned deadline, one bisection run,
  // the blocking rung once more without the setting: not 3 x 20 s.
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  REQUIRE(out.breaking.size() == 1);
  CHECK(out.breaking[0].rung == Rung::blocking);
  CHECK(out.breaking[0].setting.text == "CUDA_LAUNCH_BLOCKING=1");
  std::vector<const SessionRun*> blocking;
  for (const auto& r : out.runs)
    if (r.judgement.rung == Rung::blocking) blocking.push_back(&r);
  // The other two repeats were not waited on; the rung ran once more without the setting.
  REQUIRE(blocking.size() == 2);
  CHECK(blocking[1]->judgement.outcome == RunOutcome::clean);
  CHECK(blocking[1]->planned.env_set.count("CUDA_LAUNCH_BLOCKING") == 0);
  CHECK(blocking[0]->judgement.outcome == RunOutcome::timeout);
  CHECK_THAT(blocking[0]->judgement.reason,
             Catch::Contains("ended as hung at the deadline learned from the native run (10 x the native run's"));
  CHECK(blocking[0]->judgement.broken_by == out.breaking[0].text);
  const auto* s = skipped(out, Rung::blocking);
  REQUIRE(s);
  CHECK_THAT(s->reason, Catch::StartsWith("2 more run(s) not run: CUDA_LAUNCH_BLOCKING=1 breaks this program"));
  CHECK_THAT(out.verdict.reason, !Catch::Contains("the program's own failure"));

  // --timeout still caps: shorter than the learned deadline, it is the deadline.
  o.run.repeat = 1;
  o.timeout = 300ms;
  o.hung_floor = 5s;
  const auto capped = run_session(o);
  for (const auto& r : capped.runs)
    if (r.judgement.rung == Rung::blocking && !r.judgement.broken_by.empty()) {
      CHECK(r.judgement.outcome == RunOutcome::timeout);
      CHECK_THAT(r.judgement.reason, !Catch::Contains("learned"));
    }
}

TEST_CASE("session: the fence exposes an overrun that native runs miss (fake driver)", "[run_session]") {
  test::TempDir dir;
  const auto out = run_session(on_fake_driver(dir, "kernel-overrun", "native,blocking,fence"));
  REQUIRE(out.runs.size() == 3);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::clean);
  CHECK(out.runs[1].judgement.outcome == RunOutcome::clean);
  const auto& fence = out.runs[2];
  CHECK(fence.judgement.outcome == RunOutcome::crashed);
  CHECK(fence.judgement.signal_name == "SIGSEGV");
  REQUIRE(fence.observation.interposer);
  CHECK(fence.observation.interposer->summary.fenced == 1);
  REQUIRE(fence.judgement.attribution);
  REQUIRE(fence.judgement.attribution->suspect);
  CHECK(fence.judgement.attribution->suspect->kernel == "fill_bytes(unsigned char*, unsigned long, int)");
  CHECK(out.verdict.kind == VerdictKind::exposed);
  REQUIRE(out.verdict.first_exposed_by);
  CHECK(*out.verdict.first_exposed_by == Rung::fence);
  // No kernel log here, so no faulting address: the evidence names what ran last.
  CHECK_THAT(out.verdict.evidence,
             Catch::Contains("SIGSEGV") &&
                 Catch::EndsWith("the last kernel launched: fill_bytes(unsigned char*, unsigned long, int)"));
  // The ring files stay in the work directory for the caller to remove.
  CHECK(std::filesystem::exists(dir / "work" / "fence-0.ring"));
}

TEST_CASE("session: a correct program on the fake driver is clean with an effective fence", "[run_session]") {
  test::TempDir dir;
  auto o = on_fake_driver(dir, "clean", "native,fence");
  o.env["PROBE_NO_MANAGED"] = "1";  // every allocation fenceable
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 2);
  CHECK(out.runs[0].observation.child.out.text() == out.runs[1].observation.child.out.text());
  REQUIRE(out.runs[1].judgement.fence);
  CHECK(out.runs[1].judgement.fence->effective);
  CHECK(out.verdict.kind == VerdictKind::clean);
  CHECK_THAT(out.verdict.reason, Catch::Contains("the fence was effective"));
  // Only the end was guarded: the verdict says so, and that underruns were not looked for.
  CHECK_THAT(out.verdict.reason, Catch::EndsWith("checked past the end"));
  CHECK(out.verdict.coverage.past_end);
  CHECK_FALSE(out.verdict.coverage.before_start);
  CHECK_THAT(out.verdict.coverage.unseen.front(), Catch::Contains("underruns before the start"));
}

TEST_CASE("session: a managed buffer the fence cannot guard keeps a correct program from clean without memcheck",
          "[run_session]") {
  test::TempDir dir;
  auto o = on_fake_driver(dir, "clean", "native,fence,sanitizer");
  auto out = run_session(o);  // no compute-sanitizer
  REQUIRE(out.runs.size() == 2);
  CHECK(out.runs[1].judgement.fence->effective);
  CHECK(out.verdict.kind == VerdictKind::inconclusive);
  CHECK_THAT(out.verdict.reason, Catch::EndsWith("1 allocation(s) not fenced (managed memory)"));
  // memcheck runs for it, and the verdict rests on memcheck.
  o.run.sanitizer_path = stand_in_sanitizer(dir, "synthetic_clean.xml");
  out = run_session(o);
  REQUIRE(out.runs.size() == 3);
  CHECK_THAT(out.memcheck_reason, Catch::Contains("1 (managed memory)"));
  CHECK(out.verdict.kind == VerdictKind::clean);
  CHECK_THAT(out.verdict.reason, Catch::Contains("memcheck found nothing (the verdict rests on it"));
  CHECK(out.verdict.coverage.memcheck);
}

TEST_CASE("session: the default ladder fences both ends; a correct program is clean and says what was seen",
          "[run_session]") {
  test::TempDir dir;
  auto o = on_fake_driver(dir, "clean", "native,blocking,fence,fence-front,sanitizer");
  o.env["PROBE_NO_MANAGED"] = "1";
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 4);
  CHECK(out.runs[3].judgement.rung == Rung::fence_front);
  CHECK(out.runs[2].observation.child.out.text() == out.runs[0].observation.child.out.text());
  CHECK(out.runs[3].observation.child.out.text() == out.runs[0].observation.child.out.text());
  CHECK(out.verdict.kind == VerdictKind::clean);
  CHECK_THAT(out.verdict.reason, Catch::EndsWith("checked past the end and before the start"));
  const auto& c = out.verdict.coverage;
  CHECK(c.past_end);
  CHECK(c.before_start);
  CHECK(c.slack_writes);  // 1- and 15-byte buffers leave slack: canaries watched it, nothing changed
  CHECK(c.use_after_free);
  REQUIRE(c.fenced);
  CHECK(*c.fenced + 1 == *c.allocations);  // the host buffer is recorded, never fenced
  CHECK(c.unfenced.empty());               // ... and is no blind spot
  CHECK_THAT(c.seen.front(), Catch::Contains("reads and writes past the end") && Catch::Contains("allocations fenced"));
  CHECK(std::any_of(c.unseen.begin(), c.unseen.end(),
                    [](const std::string& l) { return l.find("reads in the alignment slack") != std::string::npos; }));
  CHECK(std::any_of(c.unseen.begin(), c.unseen.end(),
                    [](const std::string& l) { return l.find("inside a framework pool") != std::string::npos; }));
  // Nothing was unfenced and the fence was effective: memcheck is not needed.
  REQUIRE(skipped(out, Rung::sanitizer));

  // The report carries it typed, and the text and Markdown show it.
  run::RunFacts facts;
  const auto r = run_report(report::new_report({"cudadiag", "run"}, "run"), o, out, facts);
  const auto j = report::to_json(r);
  CHECK(report::validate_report(j).empty());
  CHECK(j["verdict"]["coverage"]["directions"] == report::json::array({"past_end", "before_start"}));
  CHECK(j["verdict"]["coverage"]["fenced"] == *c.fenced);
  CHECK(j["run"]["fence"]["side"] == "both");
  const auto back = report::report_from_json(j);
  REQUIRE(back.verdict.coverage);
  CHECK(back.verdict.coverage->seen == c.seen);
  CHECK_THAT(report::render(r, report::Format::text), Catch::Contains("Could not be seen:"));
  CHECK_THAT(report::render(r, report::Format::md), Catch::Contains("**Could have been seen:**"));
}

TEST_CASE("session: an underrun that the end's guard misses faults under the fence-front rung", "[run_session]") {
  test::TempDir dir;
  const auto out = run_session(on_fake_driver(dir, "underrun", "native,blocking,fence,fence-front"));
  REQUIRE(out.runs.size() == 4);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::clean);  // silent natively: the driver's padding
  CHECK(out.runs[1].judgement.outcome == RunOutcome::clean);
  CHECK(out.runs[2].judgement.outcome == RunOutcome::clean);  // the back fence cannot see it
  CHECK(out.runs[3].judgement.outcome == RunOutcome::crashed);
  CHECK(out.runs[3].judgement.signal_name == "SIGSEGV");
  CHECK(out.verdict.kind == VerdictKind::exposed);
  REQUIRE(out.verdict.first_exposed_by);
  CHECK(*out.verdict.first_exposed_by == Rung::fence_front);
  CHECK(std::filesystem::exists(dir / "work" / "fence-front-0.ring"));
}

TEST_CASE("session: a write into the alignment slack is caught at free and names the kernel", "[run_session]") {
  test::TempDir dir;
  const auto out = run_session(on_fake_driver(dir, "slack-overrun", "native,fence"));
  REQUIRE(out.runs.size() == 2);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::clean);
  const auto& fence = out.runs[1];
  CHECK(fence.observation.child.out.text() == "slack-overrun: no fault\n");  // the guard never saw it
  CHECK(fence.judgement.outcome == RunOutcome::slack_write);
  REQUIRE(fence.judgement.slack_writes.size() == 1);
  const auto& w = fence.judgement.slack_writes[0];
  CHECK(w.write.bytes == 4002);
  CHECK(w.write.first_offset == 0);
  CHECK(w.write.last_offset == 0);
  CHECK(w.write.slack_bytes == 14);  // 4002 bytes at 16-byte alignment
  CHECK(w.kernels == std::vector<std::string>{"fill_bytes(unsigned char*, unsigned long, int)"});
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK(*out.verdict.first_exposed_by == Rung::fence);
  CHECK_THAT(out.verdict.evidence,
             Catch::Contains("a write 0 bytes past the end of allocation #") &&
                 Catch::Contains("inside the alignment slack") && Catch::Contains("seen at free") &&
                 Catch::Contains("fill_bytes(unsigned char*, unsigned long, int)"));
}

TEST_CASE("session: a kernel that never finishes is a GPU hang naming it", "[run_session]") {
  test::TempDir dir;
  auto o = on_fake_driver(dir, "clean", "fence");
  o.env["FAKE_CUDA_HANG"] = "1";
  o.timeout = 1500ms;
  o.grace = 300ms;
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 1);
  const auto& j = out.runs[0].judgement;
  CHECK(j.outcome == RunOutcome::timeout);
  REQUIRE(j.hang);
  CHECK(j.hang->kernel == "fill_bytes(unsigned char*, unsigned long, int)");
  CHECK(j.hang->dump_line.empty());
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK_THAT(out.verdict.reason, Catch::StartsWith("a GPU hang: fence: GPU hang: kernel fill_bytes"));
  CHECK_THAT(out.verdict.reason, Catch::Contains("never finished"));
}

TEST_CASE("session: --sanitize auto escalates to memcheck when the fence could not see an allocation",
          "[run_session]") {
  test::TempDir dir;
  auto o = on_fake_driver(dir, "managed-overrun", "native,blocking,fence,sanitizer");
  o.run.sanitizer_path = stand_in_sanitizer(dir, "real_h200_memcheck_oob_write.xml");
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 4);  // nothing failed before it, and still memcheck ran
  CHECK(out.runs[2].judgement.outcome == RunOutcome::fence_not_effective);  // its one buffer is managed
  CHECK_THAT(out.memcheck_reason, Catch::Contains("managed memory"));
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK(*out.verdict.first_exposed_by == Rung::sanitizer);

  // Without memcheck, the managed buffer was never watched: not clean.
  o.run.sanitizer_path.clear();
  const auto blind = run_session(o);
  CHECK(blind.verdict.kind == VerdictKind::inconclusive);
  CHECK_THAT(blind.verdict.reason, Catch::Contains("1 allocation(s) not fenced (managed memory)"));
}
#endif

TEST_CASE("session: the sanitizer rung reads memcheck's XML", "[run_session]") {
  // A stand-in compute-sanitizer: saves a real memcheck XML where --save says, then runs
  // the program.
  test::TempDir dir;
  const std::string tool = (dir / "compute-sanitizer").string();
  const std::string xml = std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml";
  {
    std::ofstream script(tool);
    script << "#!/bin/sh\nwhile [ \"$1\" != --save ]; do shift; done\ncp '" << xml
           << "' \"$2\"\nwhile [ \"$1\" != --print-limit ]; do shift; done\nshift 2\nexec \"$@\"\n";
  }
  REQUIRE(::chmod(tool.c_str(), 0755) == 0);
  auto o = options(dir, sh("exit 0"), "native");
  o.run.sanitize = SanitizeMode::always;
  o.run.sanitizer_path = tool;
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 2);
  const auto& san = out.runs[1];
  CHECK(san.judgement.rung == Rung::sanitizer);
  REQUIRE(san.observation.sanitizer);
  CHECK(san.observation.sanitizer->findings.size() == 2);
  CHECK(san.judgement.outcome == RunOutcome::cuda_error);
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK(*out.verdict.first_exposed_by == Rung::sanitizer);

  // No XML written (the first session's, in the same directory, is not taken for its): said
  // so, never clean by memcheck.
  o.run.sanitizer_path = "/bin/echo";  // prints its arguments, runs nothing
  const auto none = run_session(o);
  REQUIRE(none.runs.size() == 2);
  CHECK_THAT(none.runs[1].observation.sanitizer_error, Catch::Contains("compute-sanitizer wrote no XML"));
  CHECK(none.verdict.kind == VerdictKind::inconclusive);
}

// Programs that share memory between processes: a rung whose own setting breaks the
// program (PyTorch's CUDA IPC without its caching allocator) runs once more without it
// and is never waited on again, and an overrun of a buffer imported over CUDA IPC (the
// fake driver's, with its kernel log) is exposed naming the importing process and the
// exporter's allocation.
namespace {

SessionOptions session_options_without_dumps(const test::TempDir& dir, std::vector<std::string> command,
                                             const std::string& rungs) {
  auto o = options(dir, std::move(command), rungs);
  o.run.coredump = false;
  o.grace = 300ms;
  return o;
}

// Fails as PyTorch's CUDA IPC does without its caching allocator, else says which of the
// blocking rung's settings it got.
std::vector<std::string> breaks_without_caching(const std::string& how) {
  return {"/bin/sh", "-c",
          "if [ \"$PYTORCH_NO_CUDA_MEMORY_CACHING\" = 1 ]; then echo 'RuntimeError: invalid device pointer' >&2; " +
              how + "; fi; echo \"ok [${CUDA_LAUNCH_BLOCKING-}]\""};
}

std::vector<const SessionRun*> runs_of(const SessionOutcome& out, Rung r) {
  std::vector<const SessionRun*> found;
  for (const auto& run : out.runs)
    if (run.judgement.rung == r) found.push_back(&run);
  return found;
}

}  // namespace

TEST_CASE("session: a rung whose own setting broke the program runs once more without it; clean on every rung",
          "[run_session]") {
  test::TempDir dir;
  const auto out =
      run_session(session_options_without_dumps(dir, breaks_without_caching("exit 1"), "native,blocking,fence"));
  REQUIRE(out.breaking.size() == 1);
  const BreakingSetting& b = out.breaking[0];
  CHECK(b.rung == Rung::blocking);
  CHECK(b.setting.text == "PYTORCH_NO_CUDA_MEMORY_CACHING=1");
  CHECK_FALSE(b.rerun);  // it ran
  CHECK_THAT(b.text, Catch::Contains("the blocking rung runs once more without it; PyTorch's caching allocator stayed "
                                     "on for this program: the fence guards the allocator's segments, not each tensor"));

  const auto blocking = runs_of(out, Rung::blocking);
  REQUIRE(blocking.size() == 2);
  CHECK(blocking[0]->judgement.broken_by == b.text);
  CHECK(blocking[1]->judgement.broken_by.empty());
  CHECK(blocking[1]->judgement.outcome == RunOutcome::clean);
  CHECK(blocking[1]->judgement.repeat_index == 1);
  CHECK(blocking[1]->observation.child.out.text() == "ok [1]\n");  // the rung's other settings kept
  // No run after the broken one had the setting.
  bool after = false;
  for (const auto& r : out.runs) {
    if (after) CHECK(r.planned.env_set.count("PYTORCH_NO_CUDA_MEMORY_CACHING") == 0);
    after = after || &r == blocking[0];
  }
#ifdef INTERPOSER
  const auto fence = runs_of(out, Rung::fence);
  REQUIRE(fence.size() == 1);
  CHECK(fence[0]->judgement.outcome == RunOutcome::clean);
  CHECK(fence[0]->observation.child.out.text() == "ok [1]\n");
#endif
  CHECK(out.verdict.kind == VerdictKind::clean);
  CHECK_THAT(out.verdict.reason, Catch::Contains("(1 broken by a setting of cudadiag's own not counted)"));
  CHECK(std::any_of(out.verdict.notes.begin(), out.verdict.notes.end(), [](const std::string& n) {
    return n.find("PyTorch's caching allocator stayed on for this program") != std::string::npos;
  }));

  // The report's blocking result is the run that counted; the broken one is listed,
  // skipped in the rung's statistics, its setting named.
  const auto j = report::to_json(run_report(report::new_report({"cudadiag", "run"}, "run"),
                                            session_options_without_dumps(dir, {"true"}, "native"), out,
                                            RunFacts{}));
  CHECK(report::validate_report(j).empty());
  const auto& blocking_result = j["results"][1];
  CHECK(blocking_result["profile"] == "blocking");
  CHECK(blocking_result["outcome"] == "ok");
  CHECK(blocking_result["repeats"]["failures"] == 0);
  CHECK(blocking_result["details"]["shown_repeat"] == 1);
  const auto& each = blocking_result["details"]["runs"];
  REQUIRE(each.size() == 2);
  CHECK(each[0]["outcome"] == "skipped");
  CHECK(each[0]["run_outcome"] == "exit_code");
  CHECK_THAT(each[0]["broken_by"].get<std::string>(), Catch::StartsWith("PYTORCH_NO_CUDA_MEMORY_CACHING=1 breaks"));
  CHECK(each[1]["outcome"] == "ok");
  CHECK_FALSE(each[1].contains("broken_by"));
}

TEST_CASE("session: a setting known to break the program is not waited on again", "[run_session]") {
  test::TempDir dir;
  // Waits for ever when the caching allocator is off, as a parent waiting for the child
  // that PyTorch's IPC failed in.
  auto o = session_options_without_dumps(dir, breaks_without_caching("sleep 30"), "native,blocking,fence");
  o.run.repeat = 2;
  o.hung_floor = 500ms;  // 60 s outside the tests
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = run_session(o);
  // Two native runs, one blocking run ended as hung, its bisection (one trial ended at the
  // same deadline), the blocking rung once more and the fence rung without the setting.
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  REQUIRE(out.breaking.size() == 1);
  const auto blocking = runs_of(out, Rung::blocking);
  REQUIRE(blocking.size() == 2);
  CHECK(blocking[0]->judgement.outcome == RunOutcome::timeout);
  CHECK(blocking[1]->judgement.outcome == RunOutcome::clean);
  CHECK(blocking[1]->observation.child.wall_ms < 5000);
#ifdef INTERPOSER
  for (const auto* r : runs_of(out, Rung::fence)) {
    CHECK(r->judgement.outcome == RunOutcome::clean);
    CHECK(r->observation.child.wall_ms < 5000);
  }
#endif
  CHECK(out.verdict.kind == VerdictKind::clean);
}

#if defined(IPC_PROBE) && defined(FAKE_DRIVER_DIR)
TEST_CASE("session: an overrun of a buffer imported over CUDA IPC is exposed, naming the child and the exporter's "
          "allocation (fake driver)",
          "[run_session]") {
  test::TempDir dir;
  const auto kmsg = dir / "kmsg";
  std::ofstream(kmsg).close();
  auto o = session_options_without_dumps(dir, {IPC_PROBE, "legacy", "overrun"}, "native,fence");
  o.env = {{"LD_LIBRARY_PATH", FAKE_DRIVER_DIR}, {"FAKE_CUDA_KMSG", kmsg.string()}};
  o.kernel_log = kmsg.string();
  o.run.sanitize = SanitizeMode::never;
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 2);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::clean);  // silent natively
  const SessionRun& fence = out.runs[1];
  CHECK(fence.judgement.outcome == RunOutcome::cuda_error);
  REQUIRE(fence.judgement.mmu_fault);
  REQUIRE(fence.judgement.attribution);
  CHECK(fence.judgement.attribution->relation == Relation::past_end);
  CHECK(fence.judgement.attribution->certain);
  REQUIRE(out.verdict.kind == VerdictKind::exposed);
  REQUIRE(out.verdict.first_exposed_by);
  CHECK(*out.verdict.first_exposed_by == Rung::fence);
  // The child's pid (the Xid names it) and the exporter's (the command's own process).
  const std::regex named(R"(from cuIpcOpenMemHandle_v2, fenced at its end; imported over CUDA IPC by process (\d+) )"
                         R"(from process (\d+)'s allocation #0 \(4000 bytes from cuMemAlloc_v2\)\))");
  std::smatch m;
  REQUIRE(std::regex_search(out.verdict.evidence, m, named));
  CHECK(std::stoi(m[2].str()) == fence.observation.child.pid);
  CHECK(std::stoi(m[1].str()) != fence.observation.child.pid);
  CHECK(fence.judgement.mmu_fault->address != 0);
  CHECK_THAT(out.verdict.evidence, Catch::Contains("was passed this allocation"));
}
#endif

#if defined(INTERPOSER) && defined(STATIC_RUNTIME) && defined(FAKE_DRIVER_DIR)
TEST_CASE("session: of two ranks under the fence only rank 1 overruns: the verdict and the report name rank 1 and "
          "its pid (fake driver)",
          "[run_session]") {
  test::TempDir dir;
  const auto kmsg = dir / "kmsg";
  std::ofstream(kmsg).close();
  const std::string probe = STATIC_RUNTIME;
  // Two ranks as torchrun starts them; rank 1's kernel writes one byte past its buffer.
  auto o = session_options_without_dumps(
      dir,
      sh("RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 '" + probe + "' clean & RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 '" + probe +
         "' kernel-overrun; rc=$?; wait; exit $rc"),
      "fence");
  o.env = {{"LD_LIBRARY_PATH", FAKE_DRIVER_DIR}, {"FAKE_CUDA_KMSG", kmsg.string()}};
  o.kernel_log = kmsg.string();
  o.run.sanitize = SanitizeMode::never;
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 1);
  const SessionRun& fence = out.runs[0];
  REQUIRE(fence.judgement.outcome == RunOutcome::cuda_error);

  // The pid the kernel log's Xid names: rank 1's, not the shell's.
  std::ifstream log(kmsg);
  const std::string line((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  std::smatch m;
  REQUIRE(std::regex_search(line, m, std::regex(R"(pid=(\d+))")));
  const int rank1 = std::stoi(m[1].str());
  CHECK(rank1 != fence.observation.child.pid);

  REQUIRE(fence.observation.interposer);
  CHECK(fence.observation.interposer->processes_recorded == 2);
  REQUIRE(fence.judgement.faulting_processes.size() == 1);
  CHECK(fence.judgement.faulting_processes[0].pid == rank1);
  REQUIRE(fence.judgement.attribution);
  const Attribution& a = *fence.judgement.attribution;
  CHECK(a.relation == Relation::past_end);
  CHECK(a.certain);
  REQUIRE(a.process);
  CHECK(a.process->pid == rank1);
  CHECK(a.process->rank == 1);
  CHECK(a.process->world_size == 2);
  REQUIRE(a.gpu);
  CHECK(a.gpu->pci_bus_id == "0000:00:06.0");
  REQUIRE(out.verdict.kind == VerdictKind::exposed);
  const std::string owner = "rank 1 (pid " + std::to_string(rank1) + ") on GPU 0 (0000:00:06.0)";
  CHECK_THAT(out.verdict.evidence, Catch::Contains(owner));

  const auto j = report::to_json(
      run_report(report::new_report({"cudadiag", "run"}, "run"), o, out, RunFacts{}));
  CHECK(report::validate_report(j).empty());
  const auto& result = j["results"][0];
  REQUIRE(result["profile"] == "fence");
  const auto& process = result["details"]["attribution"]["process"];
  CHECK(process["rank"] == 1);
  CHECK(process["pid"] == rank1);
  CHECK(process["local_rank"] == 1);
  CHECK(process["world_size"] == 2);
  CHECK_THAT(process["exe"].get<std::string>(), Catch::EndsWith("interposer_static_runtime"));
  const auto& gpu = result["details"]["attribution"]["gpu"];
  CHECK(gpu["ordinal"] == 0);
  CHECK(gpu["uuid"] == "GPU-fa4e0000-0000-0000-0000-000000000000");
  CHECK(gpu["pci_bus_id"] == "0000:00:06.0");
  CHECK(result["details"]["faulting_processes"][0]["pid"] == rank1);
  bool named = false;
  for (const auto& reason : j["verdict"]["reasons"]) named = named || reason.get<std::string>().find(owner) != std::string::npos;
  CHECK(named);
}
#endif

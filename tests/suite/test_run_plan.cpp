// run_plan with the fake child (tests/runner/fake_child) speaking the child protocol:
// params {"fake": "ok" | "sticky" | "segv" | "hang" | "slow" | "store"} pick its behaviour.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "profiles/sanitizer_tool.h"
#include "suite/plan.h"
#include "suite/post_steps.h"
#include "suite/run_plan.h"
#include "suite/verdict.h"
#include "tests/support/fake_run_log.h"

using namespace cudadiag;
using namespace cudadiag::suite;

namespace {

SuiteCase fake_case(const std::string& id, const std::string& behaviour, const std::string& expected) {
  SuiteCase sc;
  sc.def.id = id;
  sc.def.family = cases::Family::fault;
  sc.def.params = report::json{{"fake", behaviour}};
  sc.def.expected.otherwise = expected;
  sc.profiles = {profiles::parse_profile("default")};
  return sc;
}

// Runs of suite cases in one batch on a device slot.
Batch batch_of(Plan& p, const Suite& s, std::vector<size_t> cases, bool own, int slot = 0) {
  Batch b;
  b.device_slot = slot;
  b.own_child = own;
  for (size_t c : cases) {
    PlannedCase run;
    run.spec.index = static_cast<int>(p.runs.size());
    run.spec.case_id = s.cases[c].def.id;
    run.spec.family = s.cases[c].def.family;
    run.spec.params = s.cases[c].def.params;
    run.suite_case = c;
    run.profile = s.cases[c].profiles.front();
    run.expectation = cases::expectation_for(s.cases[c].def, run.profile);
    run.device_slot = slot;
    b.runs.push_back(p.runs.size());
    p.runs.push_back(std::move(run));
  }
  return b;
}

SuiteRunOptions fake_run_options() {
  SuiteRunOptions o;
  o.self_exe = FAKE_CHILD;
  o.jobs = 3;
  o.devices = {{0, "GPU-fake-0", "fake"}};
  o.default_deadline = std::chrono::milliseconds(5000);
  o.read_kernel_log = false;
  return o;
}

// fake_run_options() with `stop` as its stop flag, long deadlines and short graces: a
// stop, not a deadline, ends what runs.
SuiteRunOptions stoppable_run_options(std::atomic<bool>& stop) {
  auto o = fake_run_options();
  o.stop = &stop;
  o.default_deadline = std::chrono::milliseconds(60000);
  o.stop_grace = std::chrono::milliseconds(200);
  o.grace = std::chrono::milliseconds(200);
  return o;
}

// Sets `stop` after 700 ms, on a thread of its own.
std::thread stop_after_700ms(std::atomic<bool>& stop) {
  return std::thread([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    stop = true;
  });
}

}  // namespace

TEST_CASE("run_plan: batches run in children, results judged in plan order", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("good-a", "ok", "ok"), fake_case("good-b", "ok", "ok"),
             fake_case("bad-caught", "sticky", "error:700"), fake_case("good-but-faults", "sticky", "ok")};
  Plan p;
  p.batches.push_back(batch_of(p, s, {0, 1}, false));
  p.batches.push_back(batch_of(p, s, {2}, true));
  p.batches.push_back(batch_of(p, s, {3}, true));
  size_t delivered = 0;
  auto o = fake_run_options();
  o.on_result = [&](const report::Result&) { ++delivered; };
  const auto out = run_plan(s, p, o);
  CHECK_FALSE(out.interrupted);
  CHECK(delivered == 4);
  REQUIRE(out.results.size() == 4);
  CHECK(out.results[0].case_id == "good-a");
  CHECK(out.results[0].outcome == report::Outcome::ok);
  CHECK(out.results[0].expectation_met == true);
  CHECK(out.results[0].device == report::Device::gpu("GPU-fake-0"));
  CHECK(out.results[2].case_id == "bad-caught");
  CHECK(out.results[2].expectation_met == true);
  CHECK(out.results[3].expectation_met == false);
  CHECK(out.children == 3);
}

TEST_CASE("run_plan: a stop before the start leaves every run skipped as interrupted", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("a", "ok", "ok"), fake_case("b", "ok", "ok")};
  Plan p;
  p.batches.push_back(batch_of(p, s, {0}, true));
  p.batches.push_back(batch_of(p, s, {1}, true));
  std::atomic<bool> stop{true};
  auto o = fake_run_options();
  o.stop = &stop;
  const auto out = run_plan(s, p, o);
  CHECK(out.interrupted);
  REQUIRE(out.results.size() == 2);
  for (const auto& r : out.results) {
    CHECK(r.outcome == report::Outcome::skipped);
    CHECK(r.reason == "interrupted");
    CHECK_FALSE(r.expectation_met.has_value());
  }
}

TEST_CASE("run_plan: an interrupt stops a hanging child after the grace", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("quick", "ok", "ok"), fake_case("hangs", "hang", "ok")};
  Plan p;
  p.batches.push_back(batch_of(p, s, {0}, true));
  p.batches.push_back(batch_of(p, s, {1}, true));
  std::atomic<bool> stop{false};
  auto o = stoppable_run_options(stop);
  std::thread interrupter = stop_after_700ms(stop);
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = run_plan(s, p, o);
  interrupter.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(secs < 10.0);  // not the 60 s deadline
  CHECK(out.interrupted);
  REQUIRE(out.results.size() == 2);
  CHECK(out.results[0].outcome == report::Outcome::ok);
  CHECK(out.results[1].outcome == report::Outcome::skipped);
  CHECK(out.results[1].reason == "interrupted");
}

TEST_CASE("run_plan: skipped runs and batch environment", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("needs-gpu", "ok", "ok")};
  Plan p;
  PlannedCase run;
  run.spec.case_id = "needs-gpu";
  run.profile = s.cases[0].profiles.front();
  run.expectation = cases::expectation_for(s.cases[0].def, run.profile);
  run.venue = Venue::skipped;
  run.skip_reason = "no NVIDIA driver";
  p.runs.push_back(run);
  const auto out = run_plan(s, p, fake_run_options());
  REQUIRE(out.results.size() == 1);
  CHECK(out.results[0].outcome == report::Outcome::skipped);
  CHECK(out.results[0].reason == "no NVIDIA driver");
  CHECK(out.results[0].expected == "ok");
  CHECK_FALSE(out.results[0].expectation_met.has_value());

  const auto profile = profiles::parse_profile("blocking+fence");
  const auto env = child_env(profile, 1, {{0, "GPU-a", ""}, {3, "GPU-d", ""}});
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "GPU-d");
  CHECK(env.at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
  CHECK(env.at("CUDA_LAUNCH_BLOCKING") == "1");
  CHECK(child_env(profile, -1, {}).count("CUDA_VISIBLE_DEVICES") == 0);
}

TEST_CASE("run_plan: sanitizer children run under memcheck with the shared padding", "[run_plan]") {
  // A stand-in compute-sanitizer: records its arguments, then runs the child it wraps.
  char dir_template[] = "/tmp/cudadiag-sanitizer-argv-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string tool = dir + "/compute-sanitizer";
  {
    std::ofstream script(tool);
    script << "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$0.args\"\n"
              "while [ \"$1\" != --print-limit ]; do shift; done\nshift 2\nexec \"$@\"\n";
  }
  REQUIRE(::chmod(tool.c_str(), 0755) == 0);
  Suite s;
  s.cases = {fake_case("fault.ok-control", "ok", "ok")};
  Plan p;
  p.batches.push_back(batch_of(p, s, {0}, true));
  p.batches.back().sanitizer = true;
  auto o = fake_run_options();
  o.sanitizer_path = tool;
  o.scratch_dir = dir;
  const auto out = run_plan(s, p, o);
  REQUIRE(out.results.size() == 1);
  CHECK(out.results[0].outcome == report::Outcome::ok);  // the wrapped child ran

  std::ifstream in(tool + ".args");
  std::vector<std::string> args;
  for (std::string line; std::getline(in, line);) args.push_back(line);
  const auto at = [&](const std::string& word) { return std::find(args.begin(), args.end(), word); };
  REQUIRE(at("--padding") != args.end());
  CHECK(*(at("--padding") + 1) == std::to_string(profiles::kSanitizerPaddingBytes));
  CHECK(*(at("--tool") + 1) == "memcheck");
  REQUIRE(at("--save") != args.end());
  CHECK(*(at("--save") + 1) == dir + "/sanitizer-0.xml");
  CHECK(*(at("--print-limit") + 3) == "__run-case");
  CHECK(sanitizer_wrap(tool, "/x.xml").argv == profiles::sanitizer_argv(tool, "/x.xml", profiles::kSanitizerPaddingBytes));
  std::filesystem::remove_all(dir);
}

TEST_CASE("run_plan: sanitizer XML is parsed into the result", "[run_plan]") {
  report::Result r;
  r.buffers = {report::BufferRecord{"out", 4000, report::AddressRange{0x7f5190800000, 0x7f5190800fa0}, {}, {}}};
  attach_sanitizer(r, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
  REQUIRE(r.sanitizer);
  const auto san = report::to_json(*r.sanitizer);
  CHECK(san["errors"] == 2);
  CHECK(san["findings"][0]["nearest_allocation"]["buffer"] == "out");
  CHECK(san["findings"][0]["nearest_allocation"]["distance_bytes"] == 1);

  report::Result t;
  attach_sanitizer(t, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/synthetic_truncated.xml");
  REQUIRE(t.sanitizer);
  CHECK_THAT(t.sanitizer->error, Catch::Contains("unreadable XML") && Catch::Contains("line"));
  report::Result m;
  attach_sanitizer(m, "/nonexistent/x.xml");
  REQUIRE(m.sanitizer);
  CHECK_THAT(m.sanitizer->error, Catch::Contains("no XML"));
}

TEST_CASE("run_plan: under the sanitizer profile an overrun memcheck reports is judged caught", "[run_plan]") {
  // As recorded on an H200: memcheck reports the write one element past a cudaMalloc'ed
  // buffer and the program's cudaDeviceSynchronize returns 719.
  const auto s = parse_suite(R"({"cases": [{"id": "fault.oob-write", "profiles": ["sanitizer"]},
                                            {"id": "fault.underrun-read", "profiles": ["sanitizer"]},
                                            {"id": "fault.use-after-free", "profiles": ["sanitizer"]}]})",
                             "san.json");
  for (const auto& sc : s.cases) {
    INFO(sc.def.id);
    report::Result r;
    r.case_id = sc.def.id;
    r.profile = "sanitizer";
    r.outcome = report::Outcome::cuda_error;
    report::ErrorInfo e;
    e.code = 719;
    e.name = "cudaErrorLaunchFailure";
    e.error_class = cudadiag::taxonomy::ErrorClass::launch_failure;
    e.sticky = true;
    r.error = e;
    attach_sanitizer(r, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
    judge_result(r, cases::expectation_for(sc.def, profiles::parse_profile(r.profile)), profiles::parse_profile(r.profile));
    REQUIRE(r.expectation_met.has_value());
    CHECK(*r.expectation_met);

    // The program saw nothing, but the XML names the bad access: still caught.
    report::Result quiet;
    quiet.case_id = sc.def.id;
    quiet.profile = "sanitizer";
    quiet.outcome = report::Outcome::ok;
    attach_sanitizer(quiet, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
    CHECK(sanitizer_found_access_error(quiet));
    judge_result(quiet, cases::expectation_for(sc.def, profiles::parse_profile("sanitizer")), profiles::parse_profile("sanitizer"));
    CHECK(*quiet.expectation_met);

    // Silent and a clean XML: the overrun was missed.
    report::Result missed;
    missed.case_id = sc.def.id;
    missed.profile = "sanitizer";
    missed.outcome = report::Outcome::ok;
    attach_sanitizer(missed, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/synthetic_clean.xml");
    CHECK_FALSE(sanitizer_found_access_error(missed));
    judge_result(missed, cases::expectation_for(sc.def, profiles::parse_profile("sanitizer")), profiles::parse_profile("sanitizer"));
    CHECK_FALSE(*missed.expectation_met);
  }
  // Outside the sanitizer profile the findings change nothing.
  report::Result pool;
  pool.profile = "default";
  pool.outcome = report::Outcome::mismatch;
  attach_sanitizer(pool, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
  judge_result(pool, cases::expectation_for(s.cases[0].def, profiles::parse_profile("default")), profiles::parse_profile("default"));
  CHECK(*pool.expectation_met);  // default expects silent
}

TEST_CASE("run_plan: with several GPUs one result per case per GPU, and the verdict names the GPU that fails",
          "[run_plan][devices]") {
  Suite s;
  auto good = fake_case("fa.seed", "ok", "ok");
  good.def.params["fail_on_device"] = "GPU-fake-1";
  s.cases = {good, fake_case("fault.ok-control", "ok", "ok")};
  Plan p;
  p.batches.push_back(batch_of(p, s, {0, 1}, false, 0));
  p.batches.push_back(batch_of(p, s, {0, 1}, false, 1));
  auto o = fake_run_options();
  o.devices = {{0, "GPU-fake-0", "fake"}, {1, "GPU-fake-1", "fake"}};
  const auto out = run_plan(s, p, o);
  REQUIRE(out.results.size() == 4);
  std::map<std::string, int> per_device;
  for (const auto& r : out.results) ++per_device[r.device.uuid];
  CHECK(per_device == std::map<std::string, int>{{"GPU-fake-0", 2}, {"GPU-fake-1", 2}});
  CHECK(out.results[0].device_index == 0);
  CHECK(out.results[2].device_index == 1);
  CHECK(out.results[0].outcome == report::Outcome::ok);
  CHECK(out.results[2].outcome == report::Outcome::cuda_error);  // the faulty GPU
  CHECK(out.results[3].outcome == report::Outcome::ok);          // re-run in a fresh child there
  const auto v = decide_verdict(out.results, out.interrupted);
  CHECK(v.status == report::VerdictStatus::suspect);
  REQUIRE(v.reasons.size() == 1);
  CHECK_THAT(v.reasons[0], Catch::Contains("fa.seed") && Catch::Contains("on GPU-fake-1") &&
                               !Catch::Contains("GPU-fake-0"));
}

namespace {

// The suite of the site-run tests: a good case, a reproducer that faults as expected, and
// a known-good case that faults (a store: unarmed the synchronize reports it, armed the
// dump comes while the child waits). Each logs its runs and shows its dump variables.
Suite site_suite(const test::FakeRunLog& log) {
  Suite s;
  s.cases = {fake_case("good", "ok", "ok"), fake_case("bad-caught", "store", "error:700"),
             fake_case("good-but-faults", "store", "ok")};
  for (auto& sc : s.cases) {
    sc.def.params["log"] = log.path;
    sc.def.params["show_env"] = true;
    sc.def.params["dump"] = std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/slim/far_write.nvcudmp";
  }
  return s;
}

std::vector<std::string> sorted_lines(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("run_plan: a case that misses its expectation with a fault runs once more, armed, for its site; no other "
          "case does, and no child of the verdict is armed", "[run_plan][site_runs]") {
  const test::FakeRunLog log;
  const Suite s = site_suite(log);
  Plan p;
  p.batches.push_back(batch_of(p, s, {0, 1}, false));
  p.batches.push_back(batch_of(p, s, {2}, true));
  auto o = fake_run_options();
  o.coredump = true;
  const auto out = run_plan(s, p, o);
  CHECK_FALSE(out.interrupted);
  REQUIRE(out.results.size() == 3);
  CHECK(sorted_lines(log.lines()) == std::vector<std::string>{"bad-caught unarmed", "good unarmed", "good-but-faults armed",
                                                        "good-but-faults unarmed"});
  CHECK(out.children == 3);  // one per batch for the verdict, one site run
  for (const auto& r : out.results) {
    INFO(r.case_id);
    CHECK(report::to_json(r.details)["dump_env"] == report::json::array());
  }
  CHECK(out.results[0].expectation_met == true);
  CHECK(out.results[1].expectation_met == true);  // caught as expected: no site needed
  CHECK(out.results[1].fault_sites.empty());
  const report::Result& r = out.results[2];
  CHECK(r.outcome == report::Outcome::cuda_error);
  CHECK(r.expectation_met == false);
  REQUIRE(r.error);
  CHECK(r.error->surfaced_at == "synchronize");
  REQUIRE(r.fault_sites.size() == 1);
  CHECK(r.fault_sites[0].kernel == "far_write(float*, long long)");
  CHECK(decide_verdict(out.results, out.interrupted).status == report::VerdictStatus::suspect);
}

TEST_CASE("run_plan: --no-coredump makes no site run", "[run_plan][site_runs]") {
  const test::FakeRunLog log;
  const Suite s = site_suite(log);
  Plan p;
  p.batches.push_back(batch_of(p, s, {0, 1, 2}, false));
  const auto out = run_plan(s, p, fake_run_options());  // coredump off, as --no-coredump leaves it
  REQUIRE(out.results.size() == 3);
  CHECK(sorted_lines(log.lines()) ==
        std::vector<std::string>{"bad-caught unarmed", "good unarmed", "good-but-faults unarmed"});
  CHECK(out.children == 2);
  CHECK(out.results[2].expectation_met == false);
  CHECK(out.results[2].fault_sites.empty());
  CHECK_FALSE(out.results[2].details.contains("coredump"));
}

TEST_CASE("run_plan: an interrupted run makes no site run and keeps what finished", "[run_plan][site_runs]") {
  const test::FakeRunLog log;
  Suite s = site_suite(log);
  s.cases.push_back(fake_case("hangs", "hang", "ok"));
  Plan p;
  p.batches.push_back(batch_of(p, s, {2}, true));
  p.batches.push_back(batch_of(p, s, {3}, true));
  std::atomic<bool> stop{false};
  auto o = stoppable_run_options(stop);
  o.coredump = true;
  std::thread interrupter = stop_after_700ms(stop);
  const auto out = run_plan(s, p, o);
  interrupter.join();
  CHECK(out.interrupted);
  REQUIRE(out.results.size() == 2);
  CHECK(out.results[0].outcome == report::Outcome::cuda_error);  // finished before the stop
  CHECK(out.results[0].expectation_met == false);
  CHECK(out.results[0].fault_sites.empty());
  CHECK(out.results[1].reason == "interrupted");
  CHECK(log.lines() == std::vector<std::string>{"good-but-faults unarmed"});
  CHECK(out.children == 2);
}

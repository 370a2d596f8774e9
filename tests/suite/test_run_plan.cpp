// run_plan with the fake child (tests/runner/fake_child) speaking the child protocol:
// params {"fake": "ok" | "sticky" | "segv" | "hang" | "slow"} pick its behaviour.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "suite/plan.h"
#include "suite/run_plan.h"

using namespace cudadiag;
using namespace cudadiag::suite;

namespace {

SuiteCase fake_case(const std::string& id, const std::string& behaviour, const std::string& expected) {
  SuiteCase sc;
  sc.def.id = id;
  sc.def.kernel = "fake";
  sc.def.params = report::json{{"fake", behaviour}};
  sc.def.expected = {{"*", expected}};
  sc.profiles = {"default"};
  return sc;
}

Batch batch_of(const Suite& s, std::vector<size_t> cases, bool own, int first_index) {
  Batch b;
  b.profile = "default";
  b.device_slot = 0;
  b.own_child = own;
  for (size_t c : cases) {
    cases::CaseSpec spec;
    spec.index = first_index++;
    spec.case_id = s.cases[c].def.id;
    spec.kernel = "fake";
    spec.params = s.cases[c].def.params;
    b.specs.push_back(spec);
    b.case_of_spec.push_back(c);
  }
  return b;
}

RunOptions fake_options() {
  RunOptions o;
  o.self_exe = FAKE_CHILD;
  o.jobs = 3;
  o.devices = {{0, "GPU-fake-0", "fake"}};
  o.default_deadline = std::chrono::milliseconds(5000);
  o.read_kernel_log = false;
  return o;
}

}  // namespace

TEST_CASE("run_plan: batches run in children, results judged in plan order", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("good-a", "ok", "ok"), fake_case("good-b", "ok", "ok"),
             fake_case("bad-caught", "sticky", "error:700"), fake_case("good-but-faults", "sticky", "ok")};
  Plan p;
  p.batches.push_back(batch_of(s, {0, 1}, false, 0));
  p.batches.push_back(batch_of(s, {2}, true, 2));
  p.batches.push_back(batch_of(s, {3}, true, 3));
  size_t delivered = 0;
  auto o = fake_options();
  o.on_result = [&](const report::Result&) { ++delivered; };
  const auto out = run_plan(s, p, o);
  CHECK_FALSE(out.interrupted);
  CHECK(delivered == 4);
  REQUIRE(out.results.size() == 4);
  CHECK(out.results[0].case_id == "good-a");
  CHECK(out.results[0].outcome == "ok");
  CHECK(out.results[0].expectation_met == true);
  CHECK(out.results[0].device == "GPU-fake-0");
  CHECK(out.results[2].case_id == "bad-caught");
  CHECK(out.results[2].expectation_met == true);
  CHECK(out.results[3].expectation_met == false);
  CHECK(out.children == 3);
}

TEST_CASE("run_plan: a stop before the start leaves every run skipped as interrupted", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("a", "ok", "ok"), fake_case("b", "ok", "ok")};
  Plan p;
  p.batches.push_back(batch_of(s, {0}, true, 0));
  p.batches.push_back(batch_of(s, {1}, true, 1));
  std::atomic<bool> stop{true};
  auto o = fake_options();
  o.stop = &stop;
  const auto out = run_plan(s, p, o);
  CHECK(out.interrupted);
  REQUIRE(out.results.size() == 2);
  for (const auto& r : out.results) {
    CHECK(r.outcome == "skipped");
    CHECK(r.reason == "interrupted");
    CHECK_FALSE(r.expectation_met.has_value());
  }
}

TEST_CASE("run_plan: an interrupt stops a hanging child after the grace", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("quick", "ok", "ok"), fake_case("hangs", "hang", "ok")};
  Plan p;
  p.batches.push_back(batch_of(s, {0}, true, 0));
  p.batches.push_back(batch_of(s, {1}, true, 1));
  std::atomic<bool> stop{false};
  auto o = fake_options();
  o.stop = &stop;
  o.default_deadline = std::chrono::milliseconds(60000);
  o.stop_grace = std::chrono::milliseconds(200);
  o.grace = std::chrono::milliseconds(200);
  std::thread interrupter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = run_plan(s, p, o);
  interrupter.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(secs < 10.0);  // not the 60 s deadline
  CHECK(out.interrupted);
  REQUIRE(out.results.size() == 2);
  CHECK(out.results[0].outcome == "ok");
  CHECK(out.results[1].outcome == "skipped");
  CHECK(out.results[1].reason == "interrupted");
}

TEST_CASE("run_plan: skipped runs and batch environment", "[run_plan]") {
  Suite s;
  s.cases = {fake_case("needs-gpu", "ok", "ok")};
  Plan p;
  p.skipped.push_back({0, "default", -1, "no NVIDIA driver"});
  const auto out = run_plan(s, p, fake_options());
  REQUIRE(out.results.size() == 1);
  CHECK(out.results[0].outcome == "skipped");
  CHECK(out.results[0].reason == "no NVIDIA driver");
  CHECK(out.results[0].expected == "ok");
  CHECK_FALSE(out.results[0].expectation_met.has_value());

  Batch b;
  b.profile = "blocking+fence";
  b.device_slot = 1;
  const auto env = batch_env(b, {{0, "GPU-a", ""}, {3, "GPU-d", ""}});
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "GPU-d");
  CHECK(env.at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
  CHECK(env.at("CUDA_LAUNCH_BLOCKING") == "1");
  b.device_slot = -1;
  CHECK(batch_env(b, {}).count("CUDA_VISIBLE_DEVICES") == 0);
}

TEST_CASE("run_plan: sanitizer XML is parsed into the result", "[run_plan]") {
  report::Result r;
  r.buffers = report::json::array({report::json{{"name", "out"}, {"address", "0x7f5190800000"}, {"bytes", 4000}}});
  attach_sanitizer(r, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
  REQUIRE(r.sanitizer.is_object());
  CHECK(r.sanitizer["errors"] == 2);
  CHECK(r.sanitizer["findings"][0]["nearest_allocation"]["buffer"] == "out");
  CHECK(r.sanitizer["findings"][0]["nearest_allocation"]["distance_bytes"] == 1);

  report::Result t;
  attach_sanitizer(t, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/synthetic_truncated.xml");
  CHECK_THAT(t.sanitizer["error"].get<std::string>(), Catch::Contains("unreadable XML") && Catch::Contains("line"));
  report::Result m;
  attach_sanitizer(m, "/nonexistent/x.xml");
  CHECK_THAT(m.sanitizer["error"].get<std::string>(), Catch::Contains("no XML"));
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
    r.outcome = "cuda_error";
    report::ErrorInfo e;
    e.code = 719;
    e.name = "cudaErrorLaunchFailure";
    e.error_class = "launch_failure";
    e.sticky = true;
    r.error = e;
    attach_sanitizer(r, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
    judge_result(r, sc);
    REQUIRE(r.expectation_met.has_value());
    CHECK(*r.expectation_met);

    // The program saw nothing, but the XML names the bad access: still caught.
    report::Result quiet;
    quiet.case_id = sc.def.id;
    quiet.profile = "sanitizer";
    quiet.outcome = "ok";
    attach_sanitizer(quiet, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
    CHECK(sanitizer_found_access_error(quiet));
    judge_result(quiet, sc);
    CHECK(*quiet.expectation_met);

    // Silent and a clean XML: the overrun was missed.
    report::Result missed;
    missed.case_id = sc.def.id;
    missed.profile = "sanitizer";
    missed.outcome = "ok";
    attach_sanitizer(missed, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/synthetic_clean.xml");
    CHECK_FALSE(sanitizer_found_access_error(missed));
    judge_result(missed, sc);
    CHECK_FALSE(*missed.expectation_met);
  }
  // Outside the sanitizer profile the findings change nothing.
  report::Result pool;
  pool.profile = "default";
  pool.outcome = "mismatch";
  attach_sanitizer(pool, std::string(CUDADIAG_TEST_DATA) + "/sanitizer/real_h200_memcheck_oob_write.xml");
  judge_result(pool, s.cases[0]);
  CHECK(*pool.expectation_met);  // default expects silent
}

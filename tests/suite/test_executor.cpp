// The executor against fake_child's `protocol` mode: each case's params carry
// {"fake": ok|slow|sticky|segv|hang|store|abort-dump} and the stand-in child behaves
// accordingly.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <atomic>
#include <chrono>
#include <thread>

#include <functional>
#include <memory>

#include "suite/executor.h"
#include "tests/support/fake_run_log.h"

using namespace cudadiag;
using namespace std::chrono_literals;

namespace {

std::vector<suite::CaseSpec> make_batch(const std::vector<std::string>& behaviours,
                                        int first_index = 0) {
  std::vector<suite::CaseSpec> batch;
  for (size_t i = 0; i < behaviours.size(); ++i) {
    suite::CaseSpec c;
    c.index = first_index + static_cast<int>(i);
    c.case_id = "case-" + std::to_string(c.index);
    c.family = cases::Family::fault;
    c.params = {{"fake", behaviours[i]}};
    c.allocator = profiles::Allocator::direct;
    batch.push_back(c);
  }
  return batch;
}

suite::ChildSettings fake_options() {
  suite::ChildSettings o;
  o.deadline = 5000ms;
  o.grace = 300ms;
  o.profile = "test-profile";
  o.device = report::Device::gpu("GPU-fake");
  o.device_index = 2;
  return o;
}

int pid_of(const report::Result& r) { return static_cast<int>(r.details.int_or("pid", -1)); }

std::vector<report::Result> run_batch(const std::vector<suite::CaseSpec>& batch, const suite::ChildSettings& opts,
                                    const std::string& self = FAKE_CHILD) {
  return suite::execute(batch, opts, self);
}

// Several batches on one executor; results batch by batch, each in batch order.
std::vector<report::Result> execute_batches(const std::vector<std::vector<suite::CaseSpec>>& batches, int jobs,
                                            const std::atomic<bool>* stop,
                                            const std::function<void(const report::Result&)>& on_result) {
  suite::Executor ex(suite::ExecutorOptions{FAKE_CHILD, jobs, stop, 300ms});
  const auto settings = std::make_shared<const suite::ChildSettings>(fake_options());
  for (const auto& b : batches) ex.submit(b, settings);
  ex.run([&](suite::ExecutedCase& c) {
    if (on_result) on_result(c.result);
  });
  std::vector<report::Result> out;
  for (const auto& c : ex.cases()) out.push_back(c.result);
  return out;
}

}  // namespace

TEST_CASE("executor: child_spec_for builds the child command line", "[executor]") {
  auto opts = fake_options();
  const suite::Wrap wrap{{"/usr/bin/compute-sanitizer", "--tool", "memcheck", "--"}, "/tmp/x.xml"};
  opts.env_set = {{"CUDA_LAUNCH_BLOCKING", "1"}};
  opts.env_unset = {"CUDA_VISIBLE_DEVICES"};
  const auto batch = make_batch({"ok", "ok"});
  const auto spec = suite::child_spec_for(batch, opts, FAKE_CHILD, wrap);
  REQUIRE(spec.argv.size() == 8);
  CHECK(spec.argv[0] == "/usr/bin/compute-sanitizer");
  CHECK(spec.argv[4] == FAKE_CHILD);
  CHECK(spec.argv[5] == "__run-case");
  CHECK(spec.argv[6] == "--spec");
  const auto request = suite::child_request_from_json(report::json::parse(spec.argv[7]));
  REQUIRE(request.cases.size() == 2);
  CHECK(request.cases[1].case_id == "case-1");
  CHECK(spec.env_set.at("CUDA_LAUNCH_BLOCKING") == "1");
  CHECK(spec.env_unset == std::vector<std::string>{"CUDA_VISIBLE_DEVICES"});
  CHECK(spec.deadline == 10000ms);  // per case
  CHECK(spec.result_fd == 3);
  CHECK(spec.result_fd_env == "CUDADIAG_RESULT_FD");
}

TEST_CASE("executor: case children get one hardware work queue unless the user chose", "[executor]") {
  const auto batch = make_batch({"ok"});
  auto opts = fake_options();
  ::unsetenv(suite::kMaxConnectionsEnv);
  CHECK(suite::child_spec_for(batch, opts, FAKE_CHILD, {}).env_set.at(suite::kMaxConnectionsEnv) == "1");
  // Inherited from the user's environment: not overridden.
  ::setenv(suite::kMaxConnectionsEnv, "4", 1);
  CHECK(suite::child_spec_for(batch, opts, FAKE_CHILD, {}).env_set.count(suite::kMaxConnectionsEnv) == 0);
  ::unsetenv(suite::kMaxConnectionsEnv);
  // Set by the caller (a profile): kept.
  opts.env_set = {{suite::kMaxConnectionsEnv, "8"}};
  CHECK(suite::child_spec_for(batch, opts, FAKE_CHILD, {}).env_set.at(suite::kMaxConnectionsEnv) == "8");
}

TEST_CASE("executor: an ok batch runs in one child", "[executor]") {
  const auto batch = make_batch({"ok", "ok", "ok"});
  const auto results = run_batch(batch, fake_options());
  REQUIRE(results.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const auto& r = results[i];
    CHECK(r.case_id == batch[i].case_id);
    CHECK(r.outcome == report::Outcome::ok);
    CHECK(r.kernel == cases::Family::fault);
    CHECK(r.allocator == profiles::Allocator::direct);
    CHECK(r.profile == "test-profile");
    CHECK(r.device == report::Device::gpu("GPU-fake"));
    CHECK(r.device_index == 2);
    CHECK(report::to_json(r.params) == batch[i].params);
    CHECK(r.duration_ms == Approx(0.5));
    REQUIRE(r.child.has_value());
    CHECK(r.child->ending == runner::Ending::result);
    CHECK(r.child->exit_code == 0);
    CHECK(r.child->stdout_excerpt.text.find("running case 2 (ok)") != std::string::npos);
  }
  CHECK(pid_of(results[0]) == pid_of(results[2]));
  CHECK(pid_of(results[0]) == results[0].child->pid);
}

TEST_CASE("executor: a sticky error re-runs the rest in a fresh child", "[executor]") {
  const auto results = run_batch(make_batch({"ok", "sticky", "ok", "ok"}), fake_options());
  REQUIRE(results.size() == 4);
  CHECK(results[0].outcome == report::Outcome::ok);
  CHECK(results[1].outcome == report::Outcome::cuda_error);
  REQUIRE(results[1].error.has_value());
  CHECK(results[1].error->code == 700);
  CHECK(results[1].error->api_call == "cudaDeviceSynchronize");
  CHECK(results[1].error->sticky);             // from the taxonomy via annotate_error
  CHECK(results[1].error->error_class != taxonomy::ErrorClass::unknown);
  CHECK(results[2].outcome == report::Outcome::ok);
  CHECK(results[3].outcome == report::Outcome::ok);
  CHECK(results[1].child->pid == results[0].child->pid);
  CHECK(pid_of(results[2]) != pid_of(results[0]));
  CHECK(pid_of(results[2]) == pid_of(results[3]));
}

TEST_CASE("executor: a crash mid-batch is crashed and the rest re-run", "[executor]") {
  const auto results = run_batch(make_batch({"ok", "segv", "ok"}), fake_options());
  REQUIRE(results.size() == 3);
  CHECK(results[0].outcome == report::Outcome::ok);
  CHECK(results[1].outcome == report::Outcome::crashed);
  CHECK(results[1].reason.find("SIGSEGV") != std::string::npos);
  REQUIRE(results[1].child.has_value());
  CHECK(results[1].child->ending == runner::Ending::signal);
  CHECK(results[1].child->signal_name == "SIGSEGV");
  CHECK(results[2].outcome == report::Outcome::ok);
  CHECK(results[2].child->ending == runner::Ending::result);
  CHECK(pid_of(results[2]) != pid_of(results[0]));
}

TEST_CASE("executor: a hang times out at the deadline", "[executor]") {
  auto opts = fake_options();
  opts.deadline = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = run_batch(make_batch({"ok", "hang", "ok"}), opts);
  CHECK(std::chrono::steady_clock::now() - t0 < 4s);
  REQUIRE(results.size() == 3);
  CHECK(results[0].outcome == report::Outcome::ok);
  CHECK(results[1].outcome == report::Outcome::timeout);
  CHECK(results[1].child->ending == runner::Ending::timeout);
  CHECK(results[2].outcome == report::Outcome::ok);
}

TEST_CASE("executor: results_from_child tolerates a truncated last line", "[executor]") {
  const auto batch = make_batch({"ok", "ok", "ok"});
  runner::ChildOutcome o;
  o.ending = runner::Ending::signal;
  o.signal = 9;
  o.signal_name = "SIGKILL";
  o.result = "{\"index\":0,\"outcome\":\"ok\"}\n{\"index\":1,\"outco";
  std::vector<size_t> not_run;
  const auto results = suite::results_from_child(batch, o, fake_options(), &not_run);
  REQUIRE(results.size() == 2);
  CHECK(results[0].outcome == report::Outcome::ok);
  CHECK(results[1].case_id == "case-1");
  CHECK(results[1].outcome == report::Outcome::crashed);
  CHECK(results[1].reason.find("SIGKILL") != std::string::npos);
  CHECK(not_run == std::vector<size_t>{2});
}

TEST_CASE("executor: results_from_child always makes progress", "[executor]") {
  const auto batch = make_batch({"ok", "ok"});
  std::vector<size_t> not_run;
  runner::ChildOutcome stopped;
  stopped.ending = runner::Ending::result;
  stopped.exit_code = 0;
  stopped.result = "{\"done\":false}\n";
  auto r = suite::results_from_child(batch, stopped, fake_options(), &not_run);
  REQUIRE(r.size() == 1);
  CHECK(r[0].case_id == "case-0");
  CHECK(r[0].outcome == report::Outcome::no_result);
  CHECK(not_run == std::vector<size_t>{1});

  runner::ChildOutcome failed;
  failed.ending = runner::Ending::spawn_failed;
  failed.spawn_error = "/x: No such file or directory";
  r = suite::results_from_child(batch, failed, fake_options(), &not_run);
  REQUIRE(r.size() == 2);  // nothing ran, and a retry would fail the same way
  CHECK(r[0].outcome == report::Outcome::skipped);
  CHECK(r[1].outcome == report::Outcome::skipped);
  CHECK(r[1].reason.find("No such file") != std::string::npos);
  CHECK(not_run.empty());

  runner::ChildOutcome wrong_types;
  wrong_types.ending = runner::Ending::result;
  wrong_types.exit_code = 0;
  wrong_types.result = "{\"index\":0,\"outcome\":\"ok\",\"duration_ms\":\"fast\"}\n{\"done\":true}\n";
  r = suite::results_from_child(batch, wrong_types, fake_options(), &not_run);
  REQUIRE(r.size() == 2);
  CHECK(r[0].outcome == report::Outcome::no_result);
  CHECK(r[0].reason.find("malformed") != std::string::npos);
  CHECK(r[1].outcome == report::Outcome::no_result);  // done:true but no line for it
  CHECK(not_run.empty());
}

TEST_CASE("executor: batches run in parallel", "[executor]") {
  std::vector<std::vector<suite::CaseSpec>> batches;
  for (int b = 0; b < 4; ++b) batches.push_back(make_batch({"slow", "ok"}, b * 10));
  batches[2] = make_batch({"slow", "sticky", "ok"}, 20);
  std::vector<std::string> seen;
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = execute_batches(batches, 4, nullptr,
                                              [&](const report::Result& r) { seen.push_back(r.case_id); });
  CHECK(std::chrono::steady_clock::now() - t0 < 1000ms);  // serial: 4 x 0.3 s at least
  REQUIRE(results.size() == 9);
  CHECK(seen.size() == 9);
  const std::vector<std::string> ids{"case-0",  "case-1",  "case-10", "case-11", "case-20",
                                     "case-21", "case-22", "case-30", "case-31"};
  for (size_t i = 0; i < ids.size(); ++i) CHECK(results[i].case_id == ids[i]);
  CHECK(results[5].outcome == report::Outcome::cuda_error);
  CHECK(results[6].outcome == report::Outcome::ok);
  CHECK(pid_of(results[6]) != pid_of(results[4]));
}

TEST_CASE("executor: stop interrupts running and pending cases", "[executor]") {
  std::vector<std::vector<suite::CaseSpec>> batches;
  for (int b = 0; b < 3; ++b) batches.push_back(make_batch({"hang", "ok"}, b * 10));
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = execute_batches(batches, 2, &stop, {});
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  REQUIRE(results.size() == 6);
  for (const auto& r : results) {
    CHECK(r.outcome == report::Outcome::skipped);
    CHECK(r.reason == "interrupted");
  }
  CHECK(results[0].child.has_value());         // was running: its child is described
  CHECK_FALSE(results[4].child.has_value());   // batch 3 never started
}

TEST_CASE("executor: a missing executable skips every case once", "[executor]") {
  const auto results = run_batch(make_batch({"ok", "ok", "ok"}), fake_options(), "/nonexistent/cudadiag");
  REQUIRE(results.size() == 3);
  for (const auto& r : results) {
    CHECK(r.outcome == report::Outcome::skipped);
    CHECK(r.reason.find("could not be started") != std::string::npos);
    CHECK(r.child->ending == runner::Ending::spawn_failed);
  }
}

TEST_CASE("executor: a request too long for argv is split across children", "[executor]") {
  // Linux limits one argv string to 128 KiB; 40 cases of ~5 KiB params exceed it.
  std::vector<suite::CaseSpec> batch = make_batch(std::vector<std::string>(40, "ok"));
  for (auto& c : batch) c.params["padding"] = std::string(5000, 'p');
  const auto results = run_batch(batch, fake_options());
  REQUIRE(results.size() == 40);
  for (size_t i = 0; i < results.size(); ++i) {
    CHECK(results[i].case_id == batch[i].case_id);
    CHECK(results[i].outcome == report::Outcome::ok);
  }
  CHECK(pid_of(results[0]) != pid_of(results[39]));
}

TEST_CASE("executor: the children that make the results are never armed; a failed case's site run is, and its "
          "dump's site joins the result, whose outcome stays the unarmed run's", "[executor][site_runs]") {
  const test::FakeRunLog log;
  // A store onto unmapped memory: unarmed, the synchronize reports it; armed, the run sees
  // success and the driver writes the dump while the child waits after its case.
  auto batch = make_batch({"ok", "store", "ok"});
  for (auto& c : batch) {
    c.params["show_env"] = true;
    c.params["log"] = log.path;
  }
  batch[1].params["dump"] = std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/slim/far_write.nvcudmp";
  suite::ExecutorOptions eo{FAKE_CHILD, 2, nullptr, 300ms};
  eo.coredump = true;  // off by default (executor.h says why)
  suite::Executor ex(eo);
  ex.submit(batch, std::make_shared<const suite::ChildSettings>(fake_options()));
  ex.run([](suite::ExecutedCase&) {});
  const auto& got = ex.cases();
  REQUIRE(got.size() == 3);
  CHECK(got[1].result.outcome == report::Outcome::cuda_error);
  for (const auto& c : got) {
    INFO(c.spec.case_id);
    CHECK(c.result.fault_sites.empty());
    CHECK(report::to_json(c.result.details)["dump_env"] == report::json::array());  // nothing armed, no wait
  }
  CHECK(log.lines() == std::vector<std::string>{"case-0 unarmed", "case-1 unarmed", "case-2 unarmed"});

  const size_t started = ex.run_site_runs([](const suite::ExecutedCase& c) {
    return suite::wants_site_run(c.result, suite::SitePolicy::every_failure);
  });
  CHECK(started == 1);
  CHECK(log.lines() == std::vector<std::string>{"case-0 unarmed", "case-1 unarmed", "case-2 unarmed", "case-1 armed"});
  size_t site_children = 0;
  for (const auto& rec : ex.children())
    if (rec.site_for) {
      ++site_children;
      CHECK(*rec.site_for == 1);
      CHECK(rec.pid > 0);
    }
  CHECK(site_children == 1);
  const report::Result& r = got[1].result;
  CHECK(r.outcome == report::Outcome::cuda_error);  // the unarmed run's, not the armed run's ok
  REQUIRE(r.error);
  CHECK(r.error->name == "cudaErrorIllegalAddress");
  CHECK(r.error->surfaced_at == "synchronize");
  REQUIRE(r.fault_sites.size() == 1);
  CHECK(r.fault_sites[0].kernel == "far_write(float*, long long)");
  CHECK_FALSE(r.fault_sites[0].kept);
  const auto details = report::to_json(r.details);
  CHECK(details["coredump"]["site_run"] == "ok");
  CHECK(details["coredump"]["dumps"] == 1);
  CHECK(details["dump_env"] == report::json::array());  // the verdict child's details stay
  CHECK(got[0].result.fault_sites.empty());
  CHECK(got[2].result.fault_sites.empty());
  CHECK_FALSE(got[0].result.details.contains("coredump"));
}

TEST_CASE("executor: a site run the driver ended after its dump gives the site; the case keeps its own outcome",
          "[executor][site_runs]") {
  // Unarmed, the fake driver's abort is a crash; armed, the dump is written first.
  auto batch = make_batch({"abort-dump"});
  batch[0].params["dump"] = std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/slim/misaligned16.nvcudmp";
  const auto results = suite::execute(batch, fake_options(), FAKE_CHILD, nullptr, suite::SitePolicy::every_failure);
  REQUIRE(results.size() == 1);
  const report::Result& r = results[0];
  CHECK(r.outcome == report::Outcome::crashed);
  CHECK_THAT(r.reason, Catch::Contains("SIGABRT"));
  REQUIRE(r.fault_sites.size() == 1);
  CHECK(r.fault_sites[0].exception == "Warp Misaligned Address");
  CHECK(r.fault_sites[0].dump_bytes > 0);
  CHECK(report::to_json(r.details)["coredump"]["site_run"] == "crashed");

  // No site policy: nothing runs again, nothing is read.
  const auto plain = suite::execute(batch, fake_options(), FAKE_CHILD);
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].outcome == report::Outcome::crashed);
  CHECK(plain[0].fault_sites.empty());
  CHECK_FALSE(plain[0].details.contains("coredump"));
}

TEST_CASE("executor: no site run with --no-coredump, under a tool's wrap, with the user's own dump settings, or "
          "after a stop", "[executor][site_runs]") {
  const std::string dump = std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/slim/far_write.nvcudmp";
  auto run_then_site = [&](suite::ExecutorOptions eo, const suite::ChildSettings& settings, const test::FakeRunLog& log,
                           std::atomic<bool>* stop_after_run = nullptr) {
    auto batch = make_batch({"store"});
    batch[0].params["dump"] = dump;
    batch[0].params["log"] = log.path;
    suite::Executor ex(eo);
    ex.submit(batch, std::make_shared<const suite::ChildSettings>(settings));
    ex.run([](suite::ExecutedCase&) {});
    if (stop_after_run) *stop_after_run = true;
    const size_t started = ex.run_site_runs([](const suite::ExecutedCase&) { return true; });
    CHECK(ex.cases()[0].result.outcome == report::Outcome::cuda_error);
    CHECK(ex.cases()[0].result.fault_sites.empty());
    CHECK(log.lines() == std::vector<std::string>{"case-0 unarmed"});
    return started;
  };
  suite::ExecutorOptions armed{FAKE_CHILD, 1, nullptr, 300ms};
  armed.coredump = true;
  {
    INFO("--no-coredump");
    const test::FakeRunLog log;
    suite::ExecutorOptions off{FAKE_CHILD, 1, nullptr, 300ms};
    CHECK(run_then_site(off, fake_options(), log) == 0);
  }
  {
    INFO("memcheck's wrap");
    const test::FakeRunLog log;
    auto wrapped = fake_options();
    wrapped.wrap = [](size_t) { return suite::Wrap{}; };
    CHECK(run_then_site(armed, wrapped, log) == 0);
  }
  {
    INFO("the user's own setting, in the profile's environment");
    const test::FakeRunLog log;
    auto theirs = fake_options();
    theirs.env_set["CUDA_COREDUMP_FILE"] = "/nonexistent/user_%p.nvcudmp";
    CHECK(run_then_site(armed, theirs, log) == 0);
  }
  {
    INFO("a stop after the verdict's children");
    const test::FakeRunLog log;
    std::atomic<bool> stop{false};
    auto eo = armed;
    eo.stop = &stop;
    CHECK(run_then_site(eo, fake_options(), log, &stop) == 0);
  }
}

TEST_CASE("executor: a site run that saw no dump leaves the result without a site", "[executor][site_runs]") {
  // No wait after the case: the store's dump never comes.
  auto batch = make_batch({"store"});
  batch[0].params["dump"] = std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/slim/far_write.nvcudmp";
  suite::ExecutorOptions eo{FAKE_CHILD, 1, nullptr, 300ms};
  eo.coredump = true;
  eo.dump_linger = 0ms;
  suite::Executor ex(eo);
  ex.submit(batch, std::make_shared<const suite::ChildSettings>(fake_options()));
  ex.run();
  CHECK(ex.run_site_runs([](const suite::ExecutedCase&) { return true; }) == 1);
  const report::Result& r = ex.cases()[0].result;
  CHECK(r.outcome == report::Outcome::cuda_error);
  CHECK(r.fault_sites.empty());
  CHECK(report::to_json(r.details)["coredump"]["site_run"] == "ok");
  CHECK(report::to_json(r.details)["coredump"]["dumps"] == 0);
}

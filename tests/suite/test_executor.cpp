// The executor against fake_child's `protocol` mode: each case's params carry
// {"fake": ok|slow|sticky|segv|hang} and the stand-in child behaves accordingly.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <atomic>
#include <chrono>
#include <thread>

#include <functional>
#include <memory>

#include "suite/executor.h"

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

TEST_CASE("executor: case children arm GPU core dumps; a dump becomes the site of the result that ended the child",
          "[executor]") {
  auto batch = make_batch({"ok", "sticky-dump", "ok"});
  batch[1].params["dump"] = std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/slim/misaligned16.nvcudmp";
  suite::ExecutorOptions eo{FAKE_CHILD, 1, nullptr, 300ms};
  eo.coredump = true;  // off by default (executor.h says why)
  suite::Executor ex(eo);
  ex.submit(batch, std::make_shared<const suite::ChildSettings>(fake_options()));
  ex.run([](suite::ExecutedCase&) {});
  std::vector<report::Result> results;
  for (const auto& c : ex.cases()) results.push_back(c.result);
  REQUIRE(results.size() == 3);
  CHECK(results[0].fault_sites.empty());
  CHECK(results[1].outcome == report::Outcome::cuda_error);
  REQUIRE(results[1].fault_sites.size() == 1);
  CHECK(results[1].fault_sites[0].exception == "Warp Misaligned Address");
  CHECK(results[1].fault_sites[0].dump_bytes > 0);
  CHECK_FALSE(results[1].fault_sites[0].kept);
  CHECK(results[2].fault_sites.empty());  // the fresh child wrote none

  // Without skip_abort the driver ends the child right after the dump: the case is
  // judged by the exception the dump records, and the rest runs in a fresh child.
  {
    auto aborting = make_batch({"ok", "abort-dump", "ok"});
    aborting[1].params["dump"] = batch[1].params["dump"];
    suite::Executor ex2(eo);
    ex2.submit(aborting, std::make_shared<const suite::ChildSettings>(fake_options()));
    ex2.run([](suite::ExecutedCase&) {});
    const auto& got = ex2.cases();
    REQUIRE(got.size() == 3);
    CHECK(got[0].result.outcome == report::Outcome::ok);
    const report::Result& r = got[1].result;
    CHECK(r.outcome == report::Outcome::cuda_error);
    REQUIRE(r.error);
    CHECK(r.error->name == "cudaErrorMisalignedAddress");
    CHECK(r.error->error_class == taxonomy::ErrorClass::misaligned);
    CHECK(r.error->surfaced_at == "coredump");
    CHECK_THAT(r.error->message, Catch::Contains("Warp Misaligned Address"));
    REQUIRE(r.child);
    CHECK(r.child->ending == report::ChildEnding::signal);
    REQUIRE(r.fault_sites.size() == 1);
    CHECK(got[2].result.outcome == report::Outcome::ok);
    CHECK(got[2].child != got[1].child);
  }
  // Unarmed, the same abort is a crash: nothing proves what the kernel did.
  {
    auto aborting = make_batch({"abort-dump"});
    aborting[0].params["dump"] = batch[1].params["dump"];
    const auto unarmed = run_batch(aborting, fake_options());
    REQUIRE(unarmed.size() == 1);
    CHECK(unarmed[0].outcome == report::Outcome::crashed);
    CHECK(unarmed[0].fault_sites.empty());
  }

  // The user's own setting (here in the profile's environment) is kept: no dump read.
  auto settings = fake_options();
  settings.env_set["CUDA_COREDUMP_FILE"] = "/nonexistent/user_%p.nvcudmp";
  const auto theirs = run_batch(batch, settings);
  REQUIRE(theirs.size() == 3);
  CHECK(theirs[1].outcome == report::Outcome::cuda_error);
  CHECK(theirs[1].fault_sites.empty());
}

TEST_CASE("executor: an armed child waits after its last case: a dump that comes then proves the fault its run "
          "never saw", "[executor]") {
  // A store onto a guard with dumps armed: the case's run sees success, and the driver
  // writes the dump later, only while the child still lives (fence/dump_linger.h).
  auto batch = make_batch({"ok", "late-dump"});
  batch[1].params["dump"] = std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/slim/far_write.nvcudmp";
  suite::ExecutorOptions eo{FAKE_CHILD, 1, nullptr, 300ms};
  eo.coredump = true;
  eo.dump_linger = 2000ms;
  {
    suite::Executor ex(eo);
    ex.submit(batch, std::make_shared<const suite::ChildSettings>(fake_options()));
    ex.run([](suite::ExecutedCase&) {});
    const auto& got = ex.cases();
    REQUIRE(got.size() == 2);
    CHECK(got[0].result.outcome == report::Outcome::ok);
    CHECK(got[0].result.fault_sites.empty());
    const report::Result& r = got[1].result;
    CHECK(r.outcome == report::Outcome::cuda_error);
    REQUIRE(r.error);
    CHECK(r.error->name == "cudaErrorIllegalAddress");
    CHECK(r.error->surfaced_at == "coredump");
    CHECK_THAT(r.reason, Catch::StartsWith("its run saw no error, but the GPU core dump the driver wrote after it "
                                           "records Warp Illegal Address"));
    REQUIRE(r.fault_sites.size() == 1);
    CHECK(r.fault_sites[0].kernel == "far_write(float*, long long)");
  }
  // No linger asked for: the child ends at once, no dump comes, the fault stays unseen.
  eo.dump_linger = 0ms;
  suite::Executor ex(eo);
  ex.submit(batch, std::make_shared<const suite::ChildSettings>(fake_options()));
  ex.run([](suite::ExecutedCase&) {});
  REQUIRE(ex.cases().size() == 2);
  CHECK(ex.cases()[1].result.outcome == report::Outcome::ok);
  CHECK(ex.cases()[1].result.fault_sites.empty());
}

#pragma once
// The one scheduler of case children. Every batch of every command is submitted to one
// Executor, which owns the children (a runner::Pool: at most `jobs` at once, its own
// stop path) and turns what each child wrote, and how it ended, into results:
//  - a batch's cases run in one child (`<self> __run-case --spec JSON`), in one CUDA
//    context; after a sticky error ({"done":false}) or a dead child, the cases that did
//    not run are submitted again as a fresh child with the same settings, until every
//    case has a result;
//  - once the stop flag is set nothing new starts, running children are terminated
//    after the stop grace, and every case without a result of its own is skipped,
//    reason "interrupted" (decided here, once);
//  - what each child was (pid, when it ran, its wrapper's output file) is kept, so that
//    kernel-log lines and sanitizer XML are attached after the run, as post-steps;
//  - then, asked for, the site runs: failed cases once more, each alone, armed for a GPU
//    core dump whose sites join the case's result (suite/site_runs.h).
// Nothing here calls CUDA.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fence/dump_linger.h"
#include "report/report.h"
#include "runner/runner.h"
#include "suite/case_protocol.h"
#include "suite/site_runs.h"
#include "util/interrupt.h"

namespace cudadiag::suite {

// Set in every case child unless the user set it: one hardware work queue per context.
inline constexpr const char* kMaxConnectionsEnv = "CUDA_DEVICE_MAX_CONNECTIONS";

// An argv prefix for one child (compute-sanitizer ... --), and the file it writes.
struct Wrap {
  std::vector<std::string> argv;
  std::string artifact;  // e.g. the sanitizer's XML; "" when none
};

// How the children of one batch start, and what their results are tagged with.
struct ChildSettings {
  std::map<std::string, std::string> env_set;
  std::vector<std::string> env_unset;
  // Called for every child of the batch (re-runs too) with the child's number.
  std::function<Wrap(size_t child)> wrap;
  std::chrono::milliseconds deadline{60000};  // per case: a child of n cases gets n times this
  std::chrono::milliseconds grace{2000};      // SIGTERM -> SIGKILL
  size_t capture_limit = 64 * 1024;           // per stream of each child
  // Tags of the results: the profile name and the device they ran under.
  std::string profile = "default";
  report::Device device;
  int device_index = -1;
  int lane = -1;  // the device slot its children are bound to (ExecutorOptions::lanes); -1: none
};

// One child as the parent saw it.
struct ChildRecord {
  size_t id = 0;      // in start order
  size_t batch = 0;   // the submitted batch it ran (part of)
  int pid = 0;
  std::uint64_t start_us = 0, end_us = 0;  // CLOCK_MONOTONIC
  std::string artifact;                    // from its Wrap
  bool cut_by_stop = false;                // still running when the stop was requested
  std::optional<size_t> site_for;          // a site run: the position of its case in cases()
};

// One submitted case and its final result.
struct ExecutedCase {
  CaseSpec spec;
  size_t batch = 0;
  std::optional<size_t> child;  // index into children(); none: never started
  report::Result result;
};

struct ExecutorOptions {
  std::string self_exe;  // the cudadiag binary (or a stand-in speaking the child protocol)
  int jobs = 1;
  const std::atomic<bool>* stop = nullptr;
  std::chrono::milliseconds stop_grace = kStopGrace;
  // Devices the children are spread over: each has its share of `jobs` and its own queue
  // order (runner/lane_share.h); 0 or 1: one queue.
  size_t lanes = 0;
  // Site runs (suite/site_runs.h, run_site_runs below). The children that make the
  // results are never armed for GPU core dumps: with dumps armed a store's fault is not
  // reported to the program. A result that failed runs once more, alone in its own child,
  // armed (coredump/arming.h) into a private scratch folder and waiting after its case,
  // up to dump_linger, for the dump the driver writes after the synchronize
  // (fence/dump_linger.h); a site child that reaches its deadline is asked for a dump
  // through the driver's pipe first, dump_wait at most. Off unless asked for: the
  // commands ask for it unless --no-coredump. Never under a tool's wrap (memcheck owns
  // the exception there), nor when the user set the driver's variables (in the
  // environment or the profile: said once, their settings kept, no dump read).
  bool coredump = false;
  std::chrono::milliseconds dump_wait{30000};
  std::chrono::milliseconds dump_linger{fence::kDumpLingerMs};
};

class Executor {
 public:
  explicit Executor(ExecutorOptions opts);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Queues a batch; returns its number (0, 1, ...). Cases keep their spec.index.
  size_t submit(std::vector<CaseSpec> cases, std::shared_ptr<const ChildSettings> settings);
  // Runs until every case has a result (or was skipped by a stop). on_result is called
  // on this thread as each result is final, in no particular order; it may complete the
  // result (post-steps) in place.
  void run(const std::function<void(ExecutedCase&)>& on_result = {});

  // After run(): each case `wants` picks (its result final, judged by the caller) runs
  // once more alone in its own child armed for a GPU core dump, through the same pool
  // (--jobs, the stop flag); the sites of its dump join its result (merge_site_run).
  // Nothing when coredump is off, when the run was interrupted (or is, meanwhile: what
  // did not finish adds nothing), or when the user set the driver's variables. Cases of
  // a wrapped batch (memcheck) and cases that never ran in a child get none.
  // Returns how many site runs started.
  size_t run_site_runs(const std::function<bool(const ExecutedCase&)>& wants);

  // Every submitted case in submission order (batch by batch), each with its result.
  const std::vector<ExecutedCase>& cases() const;
  // Every child: the verdict's children first, then the site runs (ChildRecord::site_for).
  const std::vector<ChildRecord>& children() const;
  bool interrupted() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The result of a case before anything ran: spec and settings fields filled, outcome
// no_result. Every result a parent makes for a case starts here.
report::Result make_result(const CaseSpec& spec, const ChildSettings& settings);

// The child command line: wrap + {self_exe, "__run-case", "--spec", <request JSON>}.
runner::ChildSpec child_spec_for(const std::vector<CaseSpec>& cases, const ChildSettings& settings,
                                 const std::string& self_exe, const Wrap& wrap);

// Maps the child's result lines (one JSON object per line; a truncated last line is
// ignored) onto `cases`. Returns one result per case that got one, in order; the
// positions of cases still to run go to *not_run: those after a sticky error, and those
// after the case during which the child died (that case gets crashed, timeout or
// no_result). Always makes progress: at least one case gets a result.
std::vector<report::Result> results_from_child(const std::vector<CaseSpec>& cases,
                                               const runner::ChildOutcome& outcome, const ChildSettings& settings,
                                               std::vector<size_t>* not_run);

// Runs one batch to completion with its own executor (single-case commands, bisection);
// a stop request skips what has not finished, as interrupted. The results `policy`
// picks then get their site runs (none for SitePolicy::none).
std::vector<report::Result> execute(const std::vector<CaseSpec>& cases, const ChildSettings& settings,
                                    const std::string& self_exe, const std::atomic<bool>* stop = nullptr,
                                    SitePolicy policy = SitePolicy::none);

}  // namespace cudadiag::suite

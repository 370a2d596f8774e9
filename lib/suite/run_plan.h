#pragma once
// Runs a plan: host-only cases in the parent, every batch submitted to one Executor
// (children pinned to their device with CUDA_VISIBLE_DEVICES), then the post-steps over
// the finished results (suite/post_steps.h): sanitizer XML, CUDA that could not start,
// judging against each run's planned expectation, the site runs of the cases that missed
// it with a fault (suite/site_runs.h), kernel-log Xid lines. Stops launching
// when *stop becomes true: children still running get SIGTERM to their process group,
// SIGKILL stop_grace later, and what did not finish is skipped as "interrupted".
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "report/report.h"
#include "util/interrupt.h"
#include "suite/executor.h"
#include "suite/plan.h"
#include "suite/suite.h"

namespace cudadiag::suite {

struct SuiteRunOptions {
  std::string self_exe;
  int jobs = 1;
  std::vector<DeviceTarget> devices;           // as given to make_plan
  std::chrono::milliseconds default_deadline{60000};
  std::chrono::milliseconds grace{2000};
  std::string sanitizer_path;                  // compute-sanitizer, for sanitizer batches
  std::string scratch_dir;                     // sanitizer XML files go here
  const std::atomic<bool>* stop = nullptr;
  std::chrono::milliseconds stop_grace = kStopGrace;
  bool read_kernel_log = true;
  // Site runs (suite/site_runs.h): a case that missed its expectation with a fault runs
  // once more armed for a GPU core dump, to name its site (ExecutorOptions::coredump).
  bool coredump = false;
  // Called (on the calling thread) as each result arrives: progress display.
  std::function<void(const report::Result&)> on_result;
  double setup_ms = 0.0;  // the command's time before run_plan, for the phases line (-v)
};

// When a child ran, relative to the start of run_plan (milliseconds).
struct ChildTiming {
  size_t batch = 0;  // index into Plan::batches
  double start_ms = 0.0;
  double duration_ms = 0.0;
};

struct SuiteOutcome {
  std::vector<report::Result> results;  // one per planned run, in plan order
  bool interrupted = false;
  double wall_ms = 0.0;
  size_t children = 0;                  // children started
  double host_ms = 0.0;                 // host-only cases, decided before any child
  std::vector<ChildTiming> timings;     // every child that started
  std::string cuda_unusable;            // why CUDA could not start in the children, if it could not
};

// With -v (debug), says at the end where the time went: setup, host cases, children, the
// longest children.
SuiteOutcome run_plan(const Suite& s, const Plan& plan, const SuiteRunOptions& opts);

// The argv prefix of a child of the `sanitizer` profile: memcheck with its XML saved to
// `xml` and profiles::kSanitizerPaddingBytes of padding (the sanitizer rung of `run`
// pads the same).
Wrap sanitizer_wrap(const std::string& tool, const std::string& xml);

// Environment of a child running under `profile` on device slot `slot`: the profile's
// variables, and CUDA_VISIBLE_DEVICES narrowed to that device as DeviceTarget says (an
// entry of the job's own binding, kept in its form: index, UUID or MIG id).
std::map<std::string, std::string> child_env(const profiles::Profile& profile, int slot,
                                             const std::vector<DeviceTarget>& devices);

}  // namespace cudadiag::suite

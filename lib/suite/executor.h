#pragma once
// Runs case specs in child processes (`<self> __run-case --spec JSON`) and turns what
// the children wrote, and how they ended, into report results.
//
// One child runs a batch of cases in one CUDA context. After a sticky error the child
// stops ({"done":false}); after a crash or timeout in case k nothing more comes. Either
// way the cases that did not run are re-run in a fresh child, until every case has a
// result. Nothing here calls CUDA.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cases/case_spec.h"
#include "report/report.h"
#include "runner/runner.h"

namespace cudadiag::suite {

struct ExecOptions {
  std::string self_exe;  // the cudadiag binary (or a stand-in speaking the child protocol)
  std::map<std::string, std::string> env_set;
  std::vector<std::string> env_unset;
  // Per case: a child running n cases gets n * deadline before it is terminated.
  std::chrono::milliseconds deadline{60000};
  std::chrono::milliseconds grace{2000};
  int device_ordinal = 0;
  std::vector<std::string> wrapper;  // prefix argv, e.g. compute-sanitizer ... --
  std::string profile = "default";
  std::string device = "";  // device UUID for report results
  int device_index = -1;
  size_t capture_limit = 64 * 1024;  // per stream of each child
};

// Set in every case child unless the user set it: one hardware work queue per context.
inline constexpr const char* kMaxConnectionsEnv = "CUDA_DEVICE_MAX_CONNECTIONS";

// argv = wrapper + {self_exe, "__run-case", "--spec", <ChildRequest JSON>}; environment,
// deadline and result fd from the options.
runner::ChildSpec child_spec_for(const std::vector<cases::CaseSpec>& batch,
                                 const ExecOptions& opts);

// Maps the child's result lines (one JSON object per line; a truncated last line is
// ignored) onto the batch. Returns results in batch order for the cases that got one;
// positions (into `batch`) of cases still to run go to *not_run: those after a sticky
// error, and those after the case during which the child died (that case gets crashed,
// timeout or no_result, and its ChildInfo says how). Always makes progress: at least
// one case gets a result, so re-running not_run terminates.
std::vector<report::Result> results_from_child(const std::vector<cases::CaseSpec>& batch,
                                               const runner::ChildOutcome& outcome,
                                               const ExecOptions& opts,
                                               std::vector<size_t>* not_run);

// Runs the batch in one child, re-runs not_run cases in fresh children; one result per
// case, in batch order.
std::vector<report::Result> execute(const std::vector<cases::CaseSpec>& batch,
                                    const ExecOptions& opts);

// Runs several batches in parallel (at most `jobs` children at once), re-queueing
// not_run cases as new batches. on_result (may be empty) is called on this thread as
// each result arrives. Once *stop is true no child is started; running ones are
// terminated after a short grace; cases that did not run (or were cut off) come back
// as outcome "skipped", reason "interrupted". Returns one result per case: batch by
// batch, each in batch order.
std::vector<report::Result> execute_batches(
    const std::vector<std::vector<cases::CaseSpec>>& batches, const ExecOptions& opts, int jobs,
    const std::atomic<bool>* stop, const std::function<void(const report::Result&)>& on_result);

}  // namespace cudadiag::suite

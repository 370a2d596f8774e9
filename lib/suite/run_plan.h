#pragma once
// Runs a plan: host-only cases in the parent, batches in parallel children (at most
// `jobs` at once, each pinned to its device with CUDA_VISIBLE_DEVICES), sanitizer XML
// parsed into the results, kernel-log Xid lines attached to failed children, and every
// result judged against its expectation. Stops launching when *stop becomes true;
// children still running get stop_grace, then their process groups are terminated.
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "report/report.h"
#include "suite/plan.h"
#include "suite/suite.h"

namespace cudadiag::suite {

struct RunOptions {
  std::string self_exe;
  int jobs = 1;
  std::vector<DeviceTarget> devices;           // as given to make_plan
  std::chrono::milliseconds default_deadline{60000};
  std::chrono::milliseconds grace{2000};
  std::string sanitizer_path;                  // compute-sanitizer, for sanitizer batches
  std::string scratch_dir;                     // sanitizer XML files go here
  const std::atomic<bool>* stop = nullptr;
  std::chrono::milliseconds stop_grace{3000};
  bool read_kernel_log = true;
  // Called (serialised) as each result is final: progress display.
  std::function<void(const report::Result&)> on_result;
};

// When a batch's child ran, relative to the start of run_plan (milliseconds).
struct BatchTiming {
  size_t batch = 0;
  double start_ms = 0.0;
  double duration_ms = 0.0;
};

struct RunOutcome {
  std::vector<report::Result> results;  // plan order: host runs, skipped, then batches
  bool interrupted = false;
  double wall_ms = 0.0;
  size_t children = 0;                  // batches started
  double host_ms = 0.0;                 // host-only cases, decided before any child
  std::vector<BatchTiming> timings;     // batches in the order they finished
};

RunOutcome run_plan(const Suite& s, const Plan& plan, const RunOptions& opts);

// Environment of a batch's child: the profile's variables, and the device pinned by UUID
// (CUDA_DEVICE_ORDER=PCI_BUS_ID so ordinals match nvidia-smi).
std::map<std::string, std::string> batch_env(const Batch& b, const std::vector<DeviceTarget>& devices);

// True when r.sanitizer (parsed memcheck XML) holds a memory-access finding.
bool sanitizer_found_access_error(const report::Result& r);

// Judges r against the suite case's expectation for its profile. Skipped results are
// recorded with the expectation but not judged. A sanitizer-profile result whose memcheck
// findings name a bad access counts as caught (a cuda_error 719) even if the program
// itself saw no error.
void judge_result(report::Result& r, const SuiteCase& sc);

// Parses the sanitizer XML of a finished child into r.sanitizer (with the nearest
// buffer from r.buffers, and the distances from the child's text output).
void attach_sanitizer(report::Result& r, const std::string& xml_path);

}  // namespace cudadiag::suite

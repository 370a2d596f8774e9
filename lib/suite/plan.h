#pragma once
// Planning a repro run: suite case x profile x device x repeat -> child batches.
// Pure (no processes), so the batching rules are unit-tested:
//  - cases expected to pass under the same profile and device share one child (a CUDA
//    process costs 0.2-0.3 s to start; a sticky error ends the child and the executor
//    re-runs the rest in a fresh one);
//  - so do cases whose expected errors are all non-sticky launch errors (rejected
//    launches, failed allocations: the context stays usable and the child goes on);
//  - cases expected to fault or time out, and every sanitizer run (one XML file per
//    child), get a child of their own;
//  - batches are ordered by estimated cost, longest first, so the pool's tail is short;
//  - host-only cases of a family with host_eval are decided in the parent;
//  - runs that cannot happen (no GPU, no compute-sanitizer) are listed with the reason.
#include <cstddef>
#include <string>
#include <vector>

#include "cases/case_spec.h"
#include "suite/suite.h"

namespace cudadiag::suite {

struct DeviceTarget {
  int index = 0;       // NVML / PCI-order index as the user names it in --devices
  std::string uuid;    // "GPU-..."; results are keyed by it
  std::string name;
};

struct Batch {
  std::string profile;              // canonical profile name
  int device_slot = -1;             // index into PlanOptions.devices; -1: no device (host child)
  bool own_child = false;           // expected to fault/time out, or a sanitizer run
  bool sanitizer = false;
  std::vector<cases::CaseSpec> specs;
  std::vector<size_t> case_of_spec;  // suite case position of each spec
  int deadline_ms = 0;              // largest per-case deadline in the batch; 0: default
  int grace_ms = 0;                 // SIGTERM->SIGKILL grace; 0: the run's default
  double est_cost_ms = 0;           // estimated wall time (process start included)
};

struct HostRun {
  size_t suite_case = 0;
  std::string profile;
};

struct SkippedRun {
  size_t suite_case = 0;
  std::string profile;
  int device_slot = -1;
  std::string reason;
};

struct PlanOptions {
  std::vector<std::string> profiles_override;  // --profiles (canonical names); empty: the suite's
  int repeat_override = 0;                     // --repeat; 0: the suite's
  std::vector<DeviceTarget> devices;           // empty: no usable GPU
  std::string no_gpu_reason = "no GPU";
  bool sanitizer_available = false;
  std::string sanitizer_reason = "compute-sanitizer not found";
  size_t max_batch = 16;                       // cases per shared child at most
};

struct Plan {
  std::vector<Batch> batches;
  std::vector<HostRun> host_runs;
  std::vector<SkippedRun> skipped;
  size_t child_runs() const;   // specs in batches (each repeat of an own-child case counts)
  size_t total_runs() const;   // child runs + host runs + skipped
};

// True when a case under this expectation must run alone in its child.
bool needs_own_child(const cases::CaseDef& def, const std::string& expectation);

// True when every alternative of the expectation leaves the context usable: clean
// outcomes, or cuda errors by numeric code that the taxonomy marks non-sticky.
bool expectation_keeps_context(const std::string& expectation);

// A child stuck in a kernel dies on SIGTERM's default action: a short grace suffices.
inline constexpr int kTimeoutCaseGraceMs = 200;

// Estimated wall time of a batch in a pool child (start-up, per-case work, deadlines
// of cases expected to time out, sanitizer slowdown). Only ordering depends on it.
double estimate_cost_ms(const Batch& b, const std::vector<std::string>& expectations);

Plan make_plan(const Suite& s, const PlanOptions& opts);

}  // namespace cudadiag::suite

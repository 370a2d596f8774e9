#pragma once
// Planning a repro run: suite case x profile x device x repeat -> runs, and the runs
// that go to a child grouped into child batches. Pure (no processes), so the rules are
// unit-tested:
//  - every run carries its parsed profile and expectation: nothing downstream parses
//    a profile name or looks an expectation up again;
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
#include <optional>
#include <string>
#include <vector>

#include "cases/expectation.h"
#include "profiles/profile.h"
#include "suite/case_protocol.h"
#include "suite/suite.h"

namespace cudadiag::suite {

struct DeviceTarget {
  int index = 0;       // the driver's ordinal within the job's visible devices, as --devices names it
  std::string uuid;    // "GPU-..."; results are keyed by it
  std::string name;
  // What pins a child to this device (host/device_binding.h): CUDA_VISIBLE_DEVICES narrowed
  // to one entry of the job's binding, and CUDA_DEVICE_ORDER when the entry is a PCI-order
  // index ("" leaves the user's). Empty visible_devices: the UUID, else the index.
  std::string visible_devices{};
  std::string device_order = "PCI_BUS_ID";
};

// Where a run happens.
enum class Venue { child, host, skipped };

// One case under one profile on one device (one repeat, for a case that runs alone).
struct PlannedCase {
  CaseSpec spec;         // spec.index is the run's position in Plan::runs
  size_t suite_case = 0;
  profiles::Profile profile;
  cases::Expectation expectation;
  int device_slot = -1;          // index into PlanOptions::devices; -1: no device
  Venue venue = Venue::child;
  std::string skip_reason;       // venue skipped
};

struct Batch {
  std::vector<size_t> runs;      // positions in Plan::runs, in the order the child runs them
  int device_slot = -1;
  bool own_child = false;        // expected to fault/time out, or a sanitizer run
  bool sanitizer = false;
  int deadline_ms = 0;           // largest per-case deadline in the batch; 0: default
  int grace_ms = 0;              // SIGTERM->SIGKILL grace; 0: the run's default
  double est_cost_ms = 0;        // estimated wall time (process start included)
};

struct PlanOptions {
  std::vector<profiles::Profile> profiles_override;  // --profiles; empty: the suite's
  int repeat_override = 0;                           // --repeat; 0: the suite's
  std::optional<repeat::SeedRequest> seed;           // --seed; none: each child draws its own
  std::vector<DeviceTarget> devices;                 // empty: no usable GPU
  std::string no_gpu_reason = "no GPU";
  bool sanitizer_available = false;
  std::string sanitizer_reason = "compute-sanitizer not found";
  size_t max_batch = 16;                             // cases per shared child at most
};

struct Plan {
  std::vector<PlannedCase> runs;  // every run, in suite order (case, profile, device)
  std::vector<Batch> batches;    // the child runs, longest first
  size_t count(Venue v) const;
  size_t child_runs() const { return count(Venue::child); }
  size_t total_runs() const { return runs.size(); }
};

// True when a case under this expectation must run alone in its child.
bool needs_own_child(const cases::CaseDef& def, const cases::Expectation& e);

// A child stuck in a kernel dies on SIGTERM's default action: a short grace suffices.
inline constexpr int kTimeoutCaseGraceMs = 200;

// Estimated wall time of a batch's child (start-up, per-case work from the family's
// estimate, deadlines of cases expected to time out, sanitizer slowdown). Only the
// ordering of children depends on it.
double estimate_cost_ms(const Batch& b, const Plan& plan);

Plan make_plan(const Suite& s, const PlanOptions& opts);

// Every profile the plan would run, once each (for "does anything need the sanitizer").
std::vector<profiles::Profile> planned_profiles(const Suite& s, const PlanOptions& opts);

}  // namespace cudadiag::suite

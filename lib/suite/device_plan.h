#pragma once
// A plan seen device by device (`repro --plan`): how many children each GPU gets, its
// share of the job slots (runner/lane_share.h), the case runs it carries and its
// estimated wall time; the text `repro --plan` prints. Pure: planned for any number of
// devices, so that an 8-GPU node's plan can be looked at (and tested) without one.
#include <string>
#include <vector>

#include "suite/plan.h"

namespace cudadiag::suite {

struct DevicePlan {
  int slot = -1;                  // index into PlanOptions::devices; -1: children with no GPU
  std::vector<size_t> batches;    // positions in Plan::batches, in the order they start
  size_t case_runs = 0;           // runs in those children
  int job_slots = 0;              // the device's share of the jobs
  double est_child_ms = 0.0;      // the children's estimated time, summed
  double est_wall_ms = 0.0;       // that time over the device's slots, or its longest child
};

// One entry per device slot (0..devices-1), then one for children with no GPU when any.
std::vector<DevicePlan> plan_by_device(const Plan& plan, size_t devices, int jobs);

// `N devices: ..., -j J (S per device)`, then per device its children and cases.
std::string plan_text(const Plan& plan, const std::vector<DeviceTarget>& devices, int jobs);

// Devices that exist only in a plan (`repro --plan --plan-devices N`): indices 0..n-1,
// no UUID.
std::vector<DeviceTarget> planned_devices(int n);

}  // namespace cudadiag::suite

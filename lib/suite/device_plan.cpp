#include "suite/device_plan.h"

#include <algorithm>
#include <cstdio>

#include "runner/lane_share.h"

namespace cudadiag::suite {
namespace {

std::string fmt_s(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000.0);
  return buf;
}

std::string device_name(const std::vector<DeviceTarget>& devices, int slot) {
  if (slot < 0) return "no GPU";
  const DeviceTarget& d = devices[static_cast<size_t>(slot)];
  std::string s = "GPU " + std::to_string(d.index);
  std::string extra = d.uuid;
  if (!d.name.empty()) extra += (extra.empty() ? "" : ", ") + d.name;
  if (!extra.empty()) s += " (" + extra + ")";
  return s;
}

}  // namespace

std::vector<DevicePlan> plan_by_device(const Plan& plan, size_t devices, int jobs) {
  std::vector<DevicePlan> out(devices);
  DevicePlan none;
  const int share = runner::lane_share(jobs, devices);
  for (size_t d = 0; d < devices; ++d) {
    out[d].slot = static_cast<int>(d);
    out[d].job_slots = std::min(share, std::max(1, jobs));
  }
  none.job_slots = std::max(1, jobs);
  for (size_t i = 0; i < plan.batches.size(); ++i) {
    const Batch& b = plan.batches[i];
    const bool on_gpu = b.device_slot >= 0 && static_cast<size_t>(b.device_slot) < devices;
    DevicePlan& dp = on_gpu ? out[static_cast<size_t>(b.device_slot)] : none;
    dp.batches.push_back(i);
    dp.case_runs += b.runs.size();
    dp.est_child_ms += b.est_cost_ms;
    dp.est_wall_ms = std::max(dp.est_wall_ms, b.est_cost_ms);
  }
  auto finish = [](DevicePlan& dp) {
    dp.est_wall_ms = std::max(dp.est_wall_ms, dp.est_child_ms / std::max(1, dp.job_slots));
  };
  for (auto& dp : out) finish(dp);
  if (!none.batches.empty()) {
    finish(none);
    out.push_back(std::move(none));
  }
  return out;
}

std::string plan_text(const Plan& plan, const std::vector<DeviceTarget>& devices, int jobs) {
  const auto per_device = plan_by_device(plan, devices.size(), jobs);
  std::string t = "plan: " + std::to_string(plan.total_runs()) + " case runs on " + std::to_string(devices.size()) +
                  " device(s): " + std::to_string(plan.batches.size()) + " children, " +
                  std::to_string(plan.count(Venue::host)) + " run(s) on the host, " +
                  std::to_string(plan.count(Venue::skipped)) + " skipped; -j " + std::to_string(jobs);
  if (devices.size() > 1) t += " (" + std::to_string(runner::lane_share(jobs, devices.size())) + " per device)";
  t += "\n";
  double wall = 0.0;
  for (const auto& dp : per_device) wall = std::max(wall, dp.est_wall_ms);
  for (const auto& dp : per_device) {
    t += device_name(devices, dp.slot) + ": " + std::to_string(dp.batches.size()) + " children, " +
         std::to_string(dp.case_runs) + " case runs, " + std::to_string(dp.job_slots) + " at once, estimated " +
         fmt_s(dp.est_wall_ms) + "\n";
    size_t n = 0;
    for (size_t bi : dp.batches) {
      const Batch& b = plan.batches[bi];
      const PlannedCase& first = plan.runs[b.runs.front()];
      t += "  child " + std::to_string(++n) + ": " + first.profile.name + ", " + std::to_string(b.runs.size()) +
           " case(s), est. " + std::to_string(static_cast<long>(b.est_cost_ms)) + " ms: ";
      for (size_t k = 0; k < b.runs.size(); ++k) t += (k ? ", " : "") + plan.runs[b.runs[k]].spec.case_id;
      t += "\n";
    }
  }
  t += "estimated wall time: " + fmt_s(wall) + " (the slowest device)\n";
  return t;
}

std::vector<DeviceTarget> planned_devices(int n) {
  std::vector<DeviceTarget> out;
  for (int i = 0; i < n; ++i) {
    DeviceTarget d;
    d.index = i;
    d.name = "planned";
    out.push_back(d);
  }
  return out;
}

}  // namespace cudadiag::suite

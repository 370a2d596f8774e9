#include "report/standout.h"

#include <algorithm>
#include <map>
#include <utility>

namespace cudadiag::report {

std::vector<StandoutGpu> find_standouts(const std::vector<GpuRun>& runs) {
  // run -> device -> every judged run met
  std::map<std::string, std::map<std::string, bool>> met_on;
  std::map<std::string, int> index_of;
  for (const auto& r : runs) {
    auto [it, fresh] = met_on[r.run].try_emplace(r.device, true);
    it->second = it->second && r.met;
    if (r.index >= 0) index_of[r.device] = r.index;
  }
  std::map<std::string, StandoutGpu> by_device;
  for (const auto& [run, per_device] : met_on) {
    if (per_device.size() < 2) continue;
    size_t failed = 0;
    for (const auto& [device, met] : per_device) failed += met ? 0 : 1;
    if (failed == 0 || failed > per_device.size() - failed) continue;
    for (const auto& [device, met] : per_device) {
      if (met) continue;
      StandoutGpu& g = by_device[device];
      g.uuid = device;
      g.runs.push_back(run);
    }
  }
  std::vector<StandoutGpu> out;
  for (auto& [device, g] : by_device) {
    if (const auto it = index_of.find(device); it != index_of.end()) g.index = it->second;
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

std::vector<StandoutGpu> find_standouts(const std::vector<Result>& results, const std::vector<DeviceInfo>& devices) {
  std::vector<GpuRun> runs;
  for (const auto& r : results) {
    if (!r.device.is_gpu() || !r.expectation_met.has_value()) continue;
    runs.push_back(GpuRun{r.case_id + " under " + r.profile, r.device.uuid, r.device_index, *r.expectation_met});
  }
  auto out = find_standouts(runs);
  for (auto& g : out) {
    for (const auto& d : devices) {
      if (d.uuid.value_or("") != g.uuid || g.uuid.empty()) continue;
      g.pci_bus_id = d.pci_bus_id.value_or("");
      if (g.index < 0 && d.index) g.index = static_cast<int>(*d.index);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

std::string standout_line(const StandoutGpu& g) {
  std::string who = g.index >= 0 ? "GPU " + std::to_string(g.index) : "a GPU";
  std::string ids = g.uuid;
  if (!g.pci_bus_id.empty()) ids += (ids.empty() ? "bus " : ", bus ") + g.pci_bus_id;
  if (!ids.empty()) who += " (" + ids + ")";
  std::string line = who + " stands out: " + std::to_string(g.runs.size()) +
                     " run(s) failed there and passed on the other GPUs: ";
  for (size_t i = 0; i < g.runs.size(); ++i) {
    if (i == 3) {
      line += ", and " + std::to_string(g.runs.size() - 3) + " more";
      break;
    }
    line += (i ? ", " : "") + g.runs[i];
  }
  return line;
}

}  // namespace cudadiag::report

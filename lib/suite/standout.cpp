#include "suite/standout.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace cudadiag::suite {

std::vector<StandoutGpu> find_standouts(const std::vector<report::Result>& results,
                                        const std::vector<report::DeviceInfo>& devices) {
  // (case, profile) -> device uuid -> every judged run met
  std::map<std::pair<std::string, std::string>, std::map<std::string, bool>> met_on;
  std::map<std::string, int> index_of;
  for (const auto& r : results) {
    if (!r.device.is_gpu() || !r.expectation_met.has_value()) continue;
    auto [it, fresh] = met_on[{r.case_id, r.profile}].try_emplace(r.device.uuid, true);
    it->second = it->second && *r.expectation_met;
    if (r.device_index >= 0) index_of[r.device.uuid] = r.device_index;
  }
  std::map<std::string, StandoutGpu> by_uuid;
  for (const auto& [key, per_device] : met_on) {
    if (per_device.size() < 2) continue;
    size_t failed = 0;
    for (const auto& [uuid, met] : per_device) failed += met ? 0 : 1;
    if (failed == 0 || failed > per_device.size() - failed) continue;
    for (const auto& [uuid, met] : per_device) {
      if (met) continue;
      StandoutGpu& g = by_uuid[uuid];
      g.uuid = uuid;
      g.runs.push_back(key.first + " under " + key.second);
    }
  }
  std::vector<StandoutGpu> out;
  for (auto& [uuid, g] : by_uuid) {
    if (const auto it = index_of.find(uuid); it != index_of.end()) g.index = it->second;
    for (const auto& d : devices) {
      if (d.uuid.value_or("") != uuid || uuid.empty()) continue;
      g.pci_bus_id = d.pci_bus_id.value_or("");
      if (g.index < 0 && d.index) g.index = static_cast<int>(*d.index);
    }
    out.push_back(std::move(g));
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

}  // namespace cudadiag::suite

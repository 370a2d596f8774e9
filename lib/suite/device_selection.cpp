#include "suite/device_selection.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "host/host_facts.h"
#include "util/errors.h"

namespace cudadiag::suite {

using report::json;

std::vector<DeviceTarget> select_devices(const json& nvml_snap, const std::string& spec, std::string* no_gpu_reason) {
  std::vector<DeviceTarget> all;
  const json devices = nvml_snap.is_object() ? nvml_snap.value("devices", json::array()) : json::array();
  for (const auto& d : devices) {
    if (!d.is_object()) continue;
    DeviceTarget t;
    t.index = d.contains("index") && d["index"].is_number_integer() ? d["index"].get<int>() : static_cast<int>(all.size());
    t.uuid = d.contains("uuid") && d["uuid"].is_string() ? d["uuid"].get<std::string>() : "";
    t.name = d.contains("name") && d["name"].is_string() ? d["name"].get<std::string>() : "";
    all.push_back(t);
  }
  if (all.empty()) {
    if (no_gpu_reason) *no_gpu_reason = host::no_gpu_reason(nvml_snap);
    return all;
  }
  if (spec == "all") return all;
  std::vector<DeviceTarget> out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long idx = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || idx < 0)
      throw UsageError("--devices: '" + item + "' is not a device index (use all or e.g. 0,2)");
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& d) { return d.index == idx; });
    if (it == all.end())
      throw UsageError("--devices: no device " + item + " on this host (" + std::to_string(all.size()) +
                       " device(s), indices 0.." + std::to_string(all.size() - 1) + ")");
    if (std::none_of(out.begin(), out.end(), [&](const auto& d) { return d.index == idx; })) out.push_back(*it);
  }
  if (out.empty()) throw UsageError("--devices: '" + spec + "' names no device (use all or e.g. 0,2)");
  return out;
}

int default_jobs(size_t devices, unsigned cpus) {
  const size_t per_gpu = 8 * std::max<size_t>(1, devices);
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(std::max(1u, cpus), per_gpu)));
}

}  // namespace cudadiag::suite

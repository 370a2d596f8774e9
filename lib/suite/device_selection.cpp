#include "suite/device_selection.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "evidence/cuda_start.h"
#include "host/cuda_driver.h"
#include "host/device_binding.h"
#include "util/errors.h"

namespace cudadiag::suite {

std::vector<DeviceTarget> select_devices(const host::HostFacts& facts, const std::string& spec,
                                         std::string* no_gpu_reason) {
  std::vector<DeviceTarget> all;
  const std::string unavailable = evidence::gpu_unavailable(facts);
  if (unavailable.empty()) {
    size_t visible = 0;
    for (const auto& d : facts.devices)
      if (d.visible_to_cuda.value_or(false)) ++visible;
    for (const auto& d : facts.devices) {
      if (!d.visible_to_cuda.value_or(false) || !d.index) continue;
      DeviceTarget t;
      t.index = static_cast<int>(*d.index);
      t.uuid = d.uuid.value_or("");
      t.name = d.name.value_or("");
      // The driver's UUID names the device it numbered (under MIG, NVML's is the parent GPU's).
      const std::string cuda_uuid = d.cuda && *d.cuda ? (*d.cuda)->string_or("uuid", "") : "";
      t.visible_devices = host::narrowed_visible_devices(facts.binding, t.index, visible, cuda_uuid);
      t.device_order = facts.binding.user_order() ? "" : "PCI_BUS_ID";
      all.push_back(t);
    }
  }
  if (all.empty()) {
    if (no_gpu_reason) *no_gpu_reason = unavailable.empty() ? host::cuda_driver::kNoGpuSeen : unavailable;
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

std::map<std::string, std::string> job_binding_env() {
  const auto b = host::device_binding_from_environment();
  return b.restricts() ? host::binding_env(b) : std::map<std::string, std::string>{};
}

int default_jobs(size_t devices, unsigned cpus) {
  const size_t per_gpu = 8 * std::max<size_t>(1, devices);
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(std::max(1u, cpus), per_gpu)));
}

}  // namespace cudadiag::suite

#include "host/host_facts.h"

#include "host/devices.h"
#include "host/nvml.h"
#include "host/system_info.h"

namespace cudadiag::host {

using report::json;

std::string no_gpu_reason(const json& nvml_snapshot) {
  const json devices = nvml_snapshot.is_object() ? nvml_snapshot.value("devices", json::array()) : json::array();
  for (const auto& d : devices)
    if (d.is_object()) return "";
  const json nvml = nvml_snapshot.is_object() ? nvml_snapshot.value("nvml", json::object()) : json::object();
  return nvml.value("available", false) ? "no NVIDIA GPU found by NVML"
                                        : "no NVIDIA driver: " + nvml.value("reason", std::string("NVML not available"));
}

HostFacts host_facts_from(json host, json nvml_snapshot) {
  HostFacts f;
  f.host = std::move(host);
  // Several GPUs: how each pair is connected (PCIe path, NVLink), as NVML tells it.
  if (nvml_snapshot.contains("topology")) f.host["gpu_topology"] = nvml_snapshot["topology"];
  f.driver = nvml_snapshot.value("driver", json::object());
  f.driver["nvml"] = nvml_snapshot.value("nvml", json::object());
  f.devices = merge_devices(nvml_snapshot.value("devices", json::array()), nullptr);
  f.no_gpu_reason = no_gpu_reason(nvml_snapshot);
  f.nvml_snapshot = std::move(nvml_snapshot);
  return f;
}

HostFacts gather_host_facts() { return host_facts_from(host_json(), nvml_snapshot()); }

}  // namespace cudadiag::host

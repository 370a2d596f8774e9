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
  // Several GPUs: how each pair is connected (PCIe path, NVLink), as NVML tells it.
  if (nvml_snapshot.contains("topology")) host["gpu_topology"] = nvml_snapshot["topology"];
  f.host = report::host_info_from_json(host, "host fingerprint");
  json driver = nvml_snapshot.value("driver", json::object());
  driver["nvml"] = nvml_snapshot.value("nvml", json::object());
  f.driver = report::driver_info_from_json(driver, "NVML snapshot");
  f.devices = report::devices_from_json(merge_devices(nvml_snapshot.value("devices", json::array()), nullptr),
                                        "NVML snapshot");
  f.no_gpu_reason = no_gpu_reason(nvml_snapshot);
  f.nvml_snapshot = std::move(nvml_snapshot);
  return f;
}

HostFacts gather_host_facts() { return host_facts_from(host_json(), nvml_snapshot()); }

}  // namespace cudadiag::host

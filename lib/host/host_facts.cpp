#include "host/host_facts.h"

#include "host/cuda_driver.h"
#include "host/cuda_probe.h"
#include "host/devices.h"
#include "host/driver_probe.h"
#include "host/nvml.h"
#include "host/system_info.h"

namespace cudadiag::host {
namespace {

using report::DriverStatus;
using report::json;

constexpr const char* kNvmlConsequence = "device health (temperature, ECC, Xid) not read";
constexpr std::chrono::milliseconds kDriverProbeDeadline{60000};

std::string text(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : std::string();
}

// The driver's own words, with the binding when it is why nothing is visible.
std::string gpu_reason(const json& cuda_driver, DriverStatus status, const DeviceBinding& b) {
  std::string reason = text(cuda_driver, "reason");
  if (reason.empty()) reason = std::string(cuda_driver::kLibrary) + " gave no answer: " + cuda_driver::kNoDriverConsequence;
  if (status == DriverStatus::no_device && b.restricts()) reason += " (" + b.describe() + ")";
  return reason;
}

}  // namespace

std::string nvml_missing_note(const json& nvml_snapshot) {
  const json nvml = nvml_snapshot.is_object() ? nvml_snapshot.value("nvml", json::object()) : json::object();
  if (nvml.value("available", false)) return "";
  const std::string library = nvml.value("library", std::string("libnvidia-ml.so.1"));
  const std::string why = text(nvml, "reason");
  // A load failure is the library's absence; anything else is NVML's own answer.
  if (why.empty() || why.find("cannot open shared object") != std::string::npos || why.find(library) == 0)
    return library + " not found: " + kNvmlConsequence;
  return library + " did not answer (" + why + "): " + kNvmlConsequence;
}

HostFacts host_facts_from(json host, json nvml_snapshot, json cuda_driver, DeviceBinding binding) {
  HostFacts f;
  // Several GPUs: how each pair is connected (PCIe path, NVLink), as NVML tells it.
  if (nvml_snapshot.contains("topology")) host["gpu_topology"] = nvml_snapshot["topology"];
  f.host = report::host_info_from_json(host, "host fingerprint");
  f.binding = std::move(binding);

  const json driver_devices = cuda_driver.value("devices", json::array());
  f.gpu_status = parse_choice(report::kDriverStatuses, text(cuda_driver, "status")).value_or(DriverStatus::probe_failed);
  if (f.gpu_status == DriverStatus::ok && driver_devices.empty()) f.gpu_status = DriverStatus::no_device;
  if (f.gpu_status != DriverStatus::ok) f.no_gpu_reason = gpu_reason(cuda_driver, f.gpu_status, f.binding);
  f.nvml_note = nvml_missing_note(nvml_snapshot);

  json driver = nvml_snapshot.value("driver", json::object());
  json nvml = nvml_snapshot.value("nvml", json::object());
  if (!f.nvml_note.empty()) {
    if (nvml.contains("reason")) nvml["detail"] = nvml["reason"];
    nvml["reason"] = f.nvml_note;
  }
  driver["nvml"] = std::move(nvml);
  json cuda{{"available", cuda_driver.value("available", false)},
            {"library", text(cuda_driver, "library")},
            {"status", std::string(choice_name(report::kDriverStatuses, f.gpu_status))},
            {"reason", f.no_gpu_reason},
            {"detail", text(cuda_driver, "detail")},
            {"version", cuda_driver.value("version", json(nullptr))}};
  driver["libcuda"] = std::move(cuda);
  const json version = cuda_driver.value("version", json(nullptr));
  if (version.is_number_integer() && version.get<int>() > 0 && !driver.contains("cuda_driver_version")) {
    driver["cuda_driver_version"] = version;
    driver["cuda_driver_version_string"] = cuda_version_string(version.get<int>());
  }
  driver["device_binding"] = to_json(f.binding);

  // The driver's list is what this job may use; without an answer from it (probe failed),
  // NVML's devices are listed and none counts as visible.
  const bool driver_answered = cuda_driver.value("available", false);
  f.driver = report::driver_info_from_json(driver, "NVML snapshot and driver probe");
  f.devices = report::devices_from_json(
      merge_devices(nvml_snapshot.value("devices", json::array()), driver_answered ? driver_devices : json(nullptr)),
      "NVML snapshot and driver probe");
  f.nvml_snapshot = std::move(nvml_snapshot);
  f.cuda_driver = std::move(cuda_driver);
  return f;
}

HostFacts gather_host_facts(const std::string& self_exe) {
  const auto binding = device_binding_from_environment();
  json driver = run_driver_probe(self_exe, binding, kDriverProbeDeadline);
  return host_facts_from(host_json(), nvml_snapshot(), std::move(driver), binding);
}

}  // namespace cudadiag::host

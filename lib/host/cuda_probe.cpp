#include "host/cuda_probe.h"

#include "taxonomy/taxonomy.h"

namespace cudadiag::host {
namespace {

using report::json;

int int_or(const json& j, const char* key, int fallback) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return fallback;
  return j[key].get<int>();
}

std::string describe_error(const json& e) {
  const int code = int_or(e, "code", -1);
  std::string name = e.value("name", "");
  if (name.empty()) {
    const auto* entry = taxonomy::find_runtime(code);
    name = entry ? std::string(entry->name) : "unknown error";
  }
  std::string s = e.value("api_call", "cudaGetDeviceCount") + " returned " + name + " (" + std::to_string(code) + ")";
  if (const auto* entry = taxonomy::find_runtime(code)) {
    s += ": " + std::string(entry->meaning) + "; next: " + std::string(entry->next_step);
  } else if (!e.value("message", "").empty()) {
    s += ": " + e.value("message", "");
  }
  return s;
}

json version_fields(const json& probe) {
  json d = json::object();
  const int drv = int_or(probe, "driver_version", -1);
  if (drv > 0) {
    d["cuda_driver_version"] = drv;
    d["cuda_driver_version_string"] = cuda_version_string(drv);
  } else if (drv == 0) {
    d["cuda_driver_version"] = nullptr;  // cudaDriverGetVersion reports 0 without a driver
  }
  const int built = int_or(probe, "runtime_version_compiled", -1);
  if (built > 0) {
    d["cuda_runtime_version_built"] = built;
    d["cuda_runtime_version_built_string"] = cuda_version_string(built);
  }
  const int loaded = int_or(probe, "runtime_version_loaded", -1);
  if (loaded > 0) {
    d["cuda_runtime_version_loaded"] = loaded;
    d["cuda_runtime_version_loaded_string"] = cuda_version_string(loaded);
  }
  return d;
}

}  // namespace

std::string cuda_version_string(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::optional<report::DriverStatus> gpu_unavailable_status(int runtime_code) {
  switch (runtime_code) {
    case 3:    // initialization error: driver present but unusable
    case 34:   // stub libcuda
    case 35:   // no driver, or too old for this runtime
    case 127:  // runtime startup failure
    case 803:  // user-space driver and kernel module differ
    case 804:  // forward-compat package unsupported
      return report::DriverStatus::no_driver;
    case 46:   // devices unavailable (exclusive mode, busy)
    case 100:  // no device visible
      return report::DriverStatus::no_device;
    default:
      return std::nullopt;
  }
}

report::VerdictStatus verdict_of(report::DriverStatus status) {
  using report::DriverStatus;
  using report::VerdictStatus;
  switch (status) {
    case DriverStatus::ok: return VerdictStatus::ok;
    case DriverStatus::no_driver: return VerdictStatus::no_driver;
    case DriverStatus::no_device: return VerdictStatus::no_device;
    case DriverStatus::cuda_error: return VerdictStatus::cuda_error;
    case DriverStatus::probe_failed: break;
  }
  return VerdictStatus::probe_failed;
}

ProbeSummary probe_failed(const std::string& what) {
  ProbeSummary s;
  s.status = report::DriverStatus::probe_failed;
  s.reason = "the CUDA probe child " + what;
  return s;
}

ProbeSummary summarize_probe(const json& probe) {
  if (!probe.is_object() || !probe.contains("device_count"))
    return probe_failed("wrote no usable answer (no device_count)");
  ProbeSummary s;
  s.driver = version_fields(probe);
  if (probe.contains("device_count_error") && probe["device_count_error"].is_object()) {
    const auto& e = probe["device_count_error"];
    const int code = int_or(e, "code", -1);
    s.status = gpu_unavailable_status(code).value_or(report::DriverStatus::cuda_error);
    s.reason = describe_error(e);
    return s;
  }
  const int count = int_or(probe, "device_count", 0);
  s.devices = probe.contains("devices") && probe["devices"].is_array() ? probe["devices"] : json::array();
  if (count <= 0) {
    s.status = report::DriverStatus::no_device;
    s.reason = "cudaGetDeviceCount succeeded but reported 0 devices; check CUDA_VISIBLE_DEVICES";
    return s;
  }
  s.ran = true;
  s.status = report::DriverStatus::ok;
  s.reason = std::to_string(count) + (count == 1 ? " CUDA device" : " CUDA devices") + " visible";
  return s;
}

std::vector<std::string> device_health_findings(const std::vector<report::DeviceInfo>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) {
    if (!d.nvml || !*d.nvml) continue;
    const report::Fields& n = **d.nvml;
    std::string who = d.pci_bus_id.value_or("?");
    if (d.index) who = "device " + std::to_string(*d.index) + " (" + who + ")";
    if (const report::Fields* ecc = n.fields_of("ecc_errors")) {
      if (const report::Fields* vol = ecc->fields_of("volatile")) {
        const long long u = vol->int_or("uncorrected", 0);
        if (u > 0)
          out.push_back(who + ": " + std::to_string(u) +
                        " uncorrectable ECC errors since the last driver load: memory faults on this GPU "
                        "may be hardware, not code");
      }
    }
    if (const report::Fields* rr = n.fields_of("remapped_rows")) {
      if (rr->bool_or("failure", false)) out.push_back(who + ": row remapping failed: the GPU needs service");
      if (rr->bool_or("pending", false))
        out.push_back(who + ": a row remapping is pending: reset the GPU before trusting results");
    }
  }
  return out;
}

}  // namespace cudadiag::host

#pragma once
// The report's sections about the machine: host, driver, devices, environment. Each
// names the members cudadiag reads or redacts; the rest of what the host modules
// (lib/host: system_info, nvml, the CUDA probe) found stays as named facts in the order
// they were found, so a report read back writes the same document. The JSON edge
// (to_json, read) is host_sections.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/value.h"
#include "util/choices.h"

namespace cudadiag::report {

// A member a writer may leave out (nullopt), state as unknown (a null inside) or give.
template <typename T>
using Nullable = std::optional<std::optional<T>>;

// report.host: the host fingerprint.
struct HostInfo {
  std::optional<std::string> hostname;  // identifying: --redact hashes it
  Fields facts;  // os, kernel, glibc, cpu, memory_bytes, gpu_topology, kernel_log (env), as found
  bool empty() const { return !hostname && facts.empty(); }
  bool operator==(const HostInfo&) const = default;
};

// report.driver.nvml: whether NVML could be asked; without it, why (reason, in the words
// every command uses) and what NVML or the loader said (detail).
struct NvmlStatus {
  bool available = false;
  std::optional<std::string> library;
  std::optional<std::string> reason;
  std::optional<std::string> detail;
  bool operator==(const NvmlStatus&) const = default;
};

// What the CUDA driver (the `__probe-driver` child, host/cuda_driver.h) answered.
enum class DriverStatus : std::uint8_t { ok, no_driver, no_device, cuda_error, probe_failed };
inline constexpr ChoiceTable<DriverStatus, 5> kDriverStatuses{{
    {DriverStatus::ok, "ok"},
    {DriverStatus::no_driver, "no_driver"},
    {DriverStatus::no_device, "no_device"},
    {DriverStatus::cuda_error, "cuda_error"},
    {DriverStatus::probe_failed, "probe_failed"},
}};

// report.driver.libcuda: whether the GPU part has a driver and a device to run on.
struct LibcudaStatus {
  bool available = false;
  std::string library;
  DriverStatus status = DriverStatus::probe_failed;
  std::string reason;                  // "" when ok
  std::string detail;                  // what the loader or cuInit said
  std::optional<std::int64_t> version;  // cuDriverGetVersion; null when unknown
  bool operator==(const LibcudaStatus&) const = default;
};

// report.driver.device_binding: the variable that gave the job its devices
// (CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, ...) and its value; null when none restricts.
struct BindingInfo {
  std::string source;
  std::string value;
  bool operator==(const BindingInfo&) const = default;
};

// report.driver: NVML's driver facts, CUDA's (the probe children) and the status of each
// library, then the job's binding.
struct DriverInfo {
  std::optional<std::string> version;  // the kernel driver ("580.65.06")
  Fields facts;  // nvml_cuda_driver_version(_string), cuda_driver_version(_string), cuda_runtime_* ...
  std::optional<NvmlStatus> nvml;
  std::optional<LibcudaStatus> libcuda;
  Nullable<BindingInfo> device_binding;
  bool empty() const { return !version && facts.empty() && !nvml && !libcuda && !device_binding; }
  bool operator==(const DriverInfo&) const = default;
};

// One entry of report.devices: a GPU as NVML and CUDA see it (host/devices.h merges them).
struct DeviceInfo {
  std::optional<std::int64_t> index;       // CUDA ordinal
  std::optional<std::string> name;
  std::optional<std::string> uuid;         // identifying
  std::optional<std::string> pci_bus_id;   // identifying
  std::optional<std::string> serial;       // identifying
  std::optional<bool> visible_to_cuda;
  Nullable<Fields> cuda;                   // CUDA's view; null: CUDA does not see it
  Nullable<Fields> nvml;                   // NVML's view; null: NVML does not see it
  Fields facts;                            // members of other writers (the CUDA probe's compute_capability, ...)
  bool operator==(const DeviceInfo&) const = default;
};

// report.environment: the allowlisted variables, in the order captured (sorted by name).
struct EnvVar {
  std::string name;
  std::string value;
  bool operator==(const EnvVar& o) const { return name == o.name && value == o.value; }
};
struct Environment {
  std::vector<EnvVar> vars;
  const std::string* find(std::string_view name) const;
  // Sets (replaces) a variable; the list stays sorted by name.
  void set(const std::string& name, const std::string& value);
  bool empty() const { return vars.empty(); }
  bool operator==(const Environment&) const = default;
};

nlohmann::ordered_json to_json(const HostInfo& h);
nlohmann::ordered_json to_json(const DriverInfo& d);
nlohmann::ordered_json to_json(const DeviceInfo& d);
nlohmann::ordered_json to_json(const std::vector<DeviceInfo>& devices);
nlohmann::ordered_json to_json(const Environment& e);

class JsonReader;
// The JSON edge for the sections: what the host modules write and a report read back.
// A member of a known name but of another type stays among the facts, where it was.
HostInfo read_host(const JsonReader& rd, const nlohmann::ordered_json& j, const std::string& pointer);
DriverInfo read_driver(const JsonReader& rd, const nlohmann::ordered_json& j, const std::string& pointer);
DeviceInfo read_device(const JsonReader& rd, const nlohmann::ordered_json& j, const std::string& pointer);
std::vector<DeviceInfo> read_devices(const JsonReader& rd, const nlohmann::ordered_json& j,
                                     const std::string& pointer);
Environment read_environment(const JsonReader& rd, const nlohmann::ordered_json& j, const std::string& pointer);

// The same for a section the host modules produced (malformed input throws InputError
// naming `source`).
HostInfo host_info_from_json(const nlohmann::ordered_json& j, const std::string& source = "host");
DriverInfo driver_info_from_json(const nlohmann::ordered_json& j, const std::string& source = "driver");
std::vector<DeviceInfo> devices_from_json(const nlohmann::ordered_json& j, const std::string& source = "devices");

}  // namespace cudadiag::report

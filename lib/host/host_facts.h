#pragma once
// What a command knows of this host before it runs anything, gathered once: the host
// fingerprint, the job's device binding, the GPUs the CUDA driver lets this job use (the
// `__probe-driver` child: the parent never initialises CUDA), the NVML snapshot (driver,
// health, topology), the device views merged from both, and why the GPU part cannot run
// or NVML is missing, in the words every command uses.
#include <string>
#include <vector>

#include "host/device_binding.h"
#include "report/report.h"

namespace cudadiag::host {

struct HostFacts {
  report::HostInfo host;                                // host_json(), and gpu_topology with several GPUs
  report::json nvml_snapshot = report::json::object();  // nvml_snapshot()
  report::json cuda_driver = report::json::object();    // the driver probe's snapshot (host/cuda_driver.h)
  DeviceBinding binding;                                // the devices the job was given
  // NVML's driver section, with libcuda {available, library, status, reason, detail, version},
  // nvml {available, reason, detail} and device_binding {source, value} | null.
  report::DriverInfo driver;
  std::vector<report::DeviceInfo> devices;              // merge_devices(NVML's, the driver's)
  report::DriverStatus gpu_status = report::DriverStatus::ok;
  std::string no_gpu_reason;                            // "" when the driver lists a device
  std::string nvml_note;                                // "" when NVML answered
};

// "libnvidia-ml.so.1 not found: device health (temperature, ECC, Xid) not read", or
// why NVML did not answer; "" when it did.
std::string nvml_missing_note(const report::json& nvml_snapshot);

// The facts from a fingerprint, an NVML snapshot, a driver snapshot and the binding
// (pure: tests give all four): the JSON the host modules write becomes the report's
// typed sections here.
HostFacts host_facts_from(report::json host, report::json nvml_snapshot, report::json cuda_driver,
                          DeviceBinding binding);

// This machine: host_json(), nvml_snapshot() and the driver probe child of `self_exe`
// under this process's binding.
HostFacts gather_host_facts(const std::string& self_exe);

}  // namespace cudadiag::host

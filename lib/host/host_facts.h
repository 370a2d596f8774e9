#pragma once
// What a command knows of this host before it runs anything, gathered once: the host
// fingerprint, the NVML snapshot (driver, devices, topology), the device views merged
// from it, and whether NVML gives the GPU part anything to run on. The parent never
// calls CUDA: the devices are NVML's.
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::host {

struct HostFacts {
  report::HostInfo host;                                // host_json(), and gpu_topology with several GPUs
  report::json nvml_snapshot = report::json::object();  // nvml_snapshot()
  report::DriverInfo driver;                            // NVML's driver section with NVML's own status
  std::vector<report::DeviceInfo> devices;              // merge_devices() of NVML's devices
  std::string no_gpu_reason;                            // "" when NVML lists a device
};

// Why NVML gives nothing to run on ("no NVIDIA driver: ...", "no NVIDIA GPU found by
// NVML"); "" when it lists a device.
std::string no_gpu_reason(const report::json& nvml_snapshot);

// The facts from a fingerprint and a snapshot (pure: tests give both): the JSON the host
// modules write becomes the report's typed sections here.
HostFacts host_facts_from(report::json host, report::json nvml_snapshot);

// host_json() and nvml_snapshot() of this machine.
HostFacts gather_host_facts();

}  // namespace cudadiag::host

#pragma once
// The parent's reading of the `__probe-cuda` child's answer (the child itself lives in
// apps/cudadiag/child_probe.cpp, the parent's side in probe_cuda.cpp; the child is the
// only place `env` touches CUDA).
//
// Probe line written by the child:
//   {runtime_version_compiled, runtime_version_loaded, driver_version,
//    device_count, device_count_error:{code,name,message,api_call}?, devices:[...]}
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::host {

struct ProbeSummary {
  bool ran = false;             // CUDA works and sees at least one device
  report::DriverStatus status = report::DriverStatus::probe_failed;
  std::string reason;           // one sentence: what failed and what to do
  report::json driver = report::json::object();  // CUDA-side driver/runtime facts
  report::json devices = nullptr;                // the probe's devices[], null when it did not run
};

// 13000 -> "13.0", 12080 -> "12.8"; "" for 0 (no driver).
std::string cuda_version_string(int v);

// For the result of cudaGetDeviceCount/cudaDriverGetVersion when the GPU part cannot run:
// no_driver (35 insufficient driver, 34 stub library, 3, 127, 803, 804), no_device (100 no
// device, 46 devices unavailable), or nothing when the code does not mean that.
std::optional<report::DriverStatus> gpu_unavailable_status(int runtime_code);

// The env verdict of a probe's status (the same words).
report::VerdictStatus verdict_of(report::DriverStatus status);

// Interprets a probe line. Never throws: a malformed line is "probe_failed".
ProbeSummary summarize_probe(const report::json& probe);

// When the child ended without a line (crash, timeout, spawn failure).
ProbeSummary probe_failed(const std::string& what);

// Findings that point at the machine, from merged devices (NVML part): volatile
// uncorrectable ECC errors, pending or failed row remapping, retired pages pending.
std::vector<std::string> device_health_findings(const std::vector<report::DeviceInfo>& devices);

}  // namespace cudadiag::host

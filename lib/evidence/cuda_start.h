#pragma once
// CUDA that could not start in a child (no driver, no device, a driver that does not
// match the runtime or the kernel module): the machine, not the case or the program.
// Every command decides it here: before any child, gpu_unavailable reads the host facts
// (no driver, no device, a driver too old) and the GPU cases are skipped with its reason;
// after one, repro skips such results ("CUDA unusable"), fault and index-select report
// no_gpu, run's verdict is inconclusive with exit 3.
#include <string>

#include "host/host_facts.h"
#include "report/report.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::evidence {

// The taxonomy classes that mean CUDA could not start: no_device, driver_mismatch.
bool cuda_could_not_start(taxonomy::ErrorClass error_class);

// A result that ended in such a CUDA error.
bool cuda_could_not_start(const report::Result& r);

// The oldest NVIDIA driver branch for the CUDA 13 runtime linked into cudadiag: CUDA 13.x
// needs a driver of branch 580 or newer on Linux (NVIDIA's CUDA compatibility guide,
// minor version compatibility: a 13.x runtime runs on any 580+ driver, with the features
// of the driver's own 13.y where that is older).
inline constexpr int kMinimumDriverBranch = 580;

// When the report's driver section (`cuda_driver_version`: the CUDA version the driver
// supports, as cudaDriverGetVersion gives it; `version`: NVML's driver version such as
// "550.54.15"; `cuda_runtime_version_built`) shows a driver older than the runtime's
// CUDA major version needs: the sentence that says so and what to install. Empty when
// the driver is new enough or unknown.
std::string driver_too_old(const report::DriverInfo& driver);

// Why the GPU part cannot run on this host, in the words every command uses, decided
// from the host facts before any CUDA start: no libcuda.so.1, a driver that lists no
// device this job may use, or a libcuda older than the runtime cudadiag carries
// (driver_too_old; judged by libcuda's own version, so a forward-compatibility package
// counts). "" when the GPU part can start. NVML's absence is a note (HostFacts::nvml_note),
// never a reason. env, repro, run, fault, index-select, attention and tma all ask here.
std::string gpu_unavailable(const host::HostFacts& facts);

}  // namespace cudadiag::evidence

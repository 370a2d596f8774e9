#pragma once
// Which GPUs a repro run uses: the devices NVML lists (the parent never calls CUDA),
// filtered by --devices ("all", or indices such as "0,2").
#include <string>
#include <vector>

#include "report/report.h"
#include "suite/plan.h"

namespace cudadiag::suite {

// `nvml_snapshot` is host::nvml_snapshot()'s document. With no device, returns an empty
// list and says why in *no_gpu_reason. Throws UsageError for a malformed or unknown index.
std::vector<DeviceTarget> select_devices(const report::json& nvml_snapshot, const std::string& spec,
                                         std::string* no_gpu_reason);

// Children at once: eight per GPU (context creation contends on one GPU: eight children
// start together in 1.5 s against 2.4 s one after another on an H200), at most one per
// CPU, at least one.
int default_jobs(size_t devices, unsigned cpus);

}  // namespace cudadiag::suite

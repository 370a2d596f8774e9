#pragma once
// Which GPUs a repro run uses: the devices the CUDA driver lets this job use
// (host::HostFacts: the driver probe child, under the job's CUDA_VISIBLE_DEVICES or
// Slurm binding), filtered by --devices ("all", or ordinals within that set such as
// "0,2"). Each target carries what narrows its children to it.
#include <map>
#include <string>
#include <vector>

#include "host/host_facts.h"
#include "suite/plan.h"

namespace cudadiag::suite {

// With no device, returns an empty list and says why in *no_gpu_reason (evidence::gpu_unavailable:
// the words every command uses). Throws UsageError for a malformed or unknown index.
std::vector<DeviceTarget> select_devices(const host::HostFacts& facts, const std::string& spec,
                                         std::string* no_gpu_reason);

// What a child that is not pinned to one device (a one-case command's) gets so that it
// sees the job's GPUs: a Slurm or generic binding as CUDA_VISIBLE_DEVICES in PCI order;
// nothing when CUDA_VISIBLE_DEVICES already says them or nothing restricts the devices.
std::map<std::string, std::string> job_binding_env();

// Children at once: eight per GPU (context creation contends on one GPU: eight children
// start together in 1.5 s against 2.4 s one after another on an H200), at most one per
// CPU, at least one.
int default_jobs(size_t devices, unsigned cpus);

}  // namespace cudadiag::suite

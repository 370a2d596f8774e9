#pragma once
// The CUDA probe, the parent's side: spawns `<self> __probe-cuda` (child_probe.h, the
// child that asks CUDA what it sees) and reads its answer. Never calls CUDA itself.
#include <chrono>
#include <map>
#include <string>

#include "host/cuda_probe.h"
#include "host/host_facts.h"

namespace cudadiag::app {

inline constexpr const char* kProbeCudaCommand = "__probe-cuda";

// Spawns `self_exe __probe-cuda` and reads its answer. Never throws for anything the
// child does: a crash, a timeout or a missing answer is a "probe_failed" summary.
// `env_set` is added to its environment (the job's device binding, host::binding_env).
host::ProbeSummary run_cuda_probe(const std::string& self_exe, std::chrono::milliseconds deadline,
                                  const std::map<std::string, std::string>& env_set = {});

// The runtime probe, only where the host facts say CUDA can start
// (evidence::gpu_unavailable); otherwise a summary that did not run, with that reason and
// the driver's status, so every command gives the same words. The child sees the job's
// device binding.
host::ProbeSummary probe_cuda_on(const host::HostFacts& facts, const std::string& self_exe,
                                 std::chrono::milliseconds deadline);

}  // namespace cudadiag::app

// The CUDA probe child. It runs in its own process because a broken driver can crash
// or hang CUDA initialisation, and the parent must never initialise CUDA itself.
#include "child_probe.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "evidence/cuda_start.h"
#include "host/device_binding.h"
#include "host/driver_probe.h"
#include "commands.h"
#include "util/interrupt.h"
#include "report/report.h"
#include "runner/runner.h"
#include "util/exit_codes.h"
#include "util/fd_io.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

using report::json;

json error_json(cudaError_t rc, const char* api_call) {
  return json{{"code", static_cast<int>(rc)},
              {"name", cudaGetErrorName(rc)},
              {"message", cudaGetErrorString(rc)},
              {"api_call", api_call}};
}

std::string uuid_string(const cudaUUID_t& u) {
  // Same text as NVML: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  std::string s = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += hex;
  }
  return s;
}

json attribute(cudaDeviceAttr attr, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so later calls start clean
    return nullptr;
  }
  return v;
}

std::string compute_mode_name(const json& v) {
  if (!v.is_number_integer()) return "unknown";
  switch (v.get<int>()) {
    case cudaComputeModeDefault: return "default";
    case cudaComputeModeExclusive: return "exclusive_thread";
    case cudaComputeModeProhibited: return "prohibited";
    case cudaComputeModeExclusiveProcess: return "exclusive_process";
    default: return std::to_string(v.get<int>());
  }
}

json device_json(int dev) {
  json d{{"index", dev}};
  cudaDeviceProp p{};
  const cudaError_t rc = cudaGetDeviceProperties(&p, dev);
  if (rc != cudaSuccess) {
    d["error"] = error_json(rc, "cudaGetDeviceProperties");
    cudaGetLastError();
    return d;
  }
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", static_cast<unsigned>(p.pciDomainID),
                static_cast<unsigned>(p.pciBusID), static_cast<unsigned>(p.pciDeviceID));
  d["name"] = std::string(p.name);
  d["uuid"] = uuid_string(p.uuid);
  d["pci_bus_id"] = pci;
  d["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  d["sm_arch"] = "sm_" + std::to_string(p.major * 10 + p.minor);
  d["multiprocessors"] = p.multiProcessorCount;
  d["total_memory_bytes"] = static_cast<unsigned long long>(p.totalGlobalMem);
  d["l2_cache_bytes"] = p.l2CacheSize;
  d["shared_mem_per_block"] = static_cast<unsigned long long>(p.sharedMemPerBlock);
  d["shared_mem_per_block_optin"] = static_cast<unsigned long long>(p.sharedMemPerBlockOptin);
  d["shared_mem_per_sm"] = static_cast<unsigned long long>(p.sharedMemPerMultiprocessor);
  d["regs_per_block"] = p.regsPerBlock;
  d["max_threads_per_block"] = p.maxThreadsPerBlock;
  d["max_grid_size"] = {p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]};
  d["warp_size"] = p.warpSize;
  d["memory_bus_width"] = p.memoryBusWidth;
  d["ecc_enabled"] = p.ECCEnabled != 0;
  d["integrated"] = p.integrated != 0;
  d["managed_memory"] = p.managedMemory != 0;
  d["cooperative_launch"] = p.cooperativeLaunch != 0;
  d["cluster_launch"] = p.clusterLaunch != 0;
  d["mps_enabled"] = p.mpsEnabled != 0;
  d["compute_mode"] = compute_mode_name(attribute(cudaDevAttrComputeMode, dev));
  const json timeout = attribute(cudaDevAttrKernelExecTimeout, dev);
  d["kernel_exec_timeout"] = timeout.is_number_integer() ? json(timeout.get<int>() != 0) : json(nullptr);
  d["clock_rate_khz"] = attribute(cudaDevAttrClockRate, dev);
  d["memory_clock_rate_khz"] = attribute(cudaDevAttrMemoryClockRate, dev);
  return d;
}

json probe() {
  json out{{"runtime_version_compiled", CUDART_VERSION}};
  int v = 0;
  cudaError_t rc = cudaRuntimeGetVersion(&v);
  out["runtime_version_loaded"] = rc == cudaSuccess ? json(v) : json(nullptr);
  v = 0;
  rc = cudaDriverGetVersion(&v);
  out["driver_version"] = rc == cudaSuccess ? json(v) : json(nullptr);
  if (rc != cudaSuccess) out["driver_version_error"] = error_json(rc, "cudaDriverGetVersion");
  int count = 0;
  rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    out["device_count"] = 0;
    out["device_count_error"] = error_json(rc, "cudaGetDeviceCount");
    out["devices"] = json::array();
    return out;
  }
  out["device_count"] = count;
  out["devices"] = json::array();
  for (int i = 0; i < count; ++i) out["devices"].push_back(device_json(i));
  return out;
}

int run_probe_child() {
  const char* fd_text = std::getenv(runner::kResultFdEnv);
  const int fd = fd_text ? std::atoi(fd_text) : STDOUT_FILENO;
  const std::string line = probe().dump() + "\n";
  if (!write_all(fd, line)) {
    std::fprintf(stderr, "cudadiag probe: cannot write the result to fd %d\n", fd);
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace

void set_probe_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(kProbeCudaCommand, "");  // empty description: hidden
  cmd->group("");
  cmd->callback([] { set_exit_code(run_probe_child()); });
  auto* driver = app.add_subcommand(host::kProbeDriverCommand, "");  // hidden, like the above
  driver->group("");
  driver->callback([] { set_exit_code(host::write_driver_probe_answer()); });
}

host::ProbeSummary run_cuda_probe(const std::string& self_exe, std::chrono::milliseconds deadline,
                                  const std::map<std::string, std::string>& env_set) {
  runner::ChildSpec spec;
  spec.argv = {self_exe, kProbeCudaCommand};
  spec.env_set = env_set;
  spec.deadline = deadline;
  spec.result_fd_env = runner::kResultFdEnv;
  spec.label = "cuda-probe";
  // An interrupt ends the probe too: the command writes what it has at once.
  const auto out = runner::run_child(spec, &stop_flag(), kStopGrace);
  spdlog::debug("cuda probe: ending {} after {:.0f} ms", runner::to_string(out.ending), out.wall_ms);
  switch (out.ending) {
    case runner::Ending::result:
      break;
    case runner::Ending::spawn_failed:
      return host::probe_failed("could not be started: " + out.spawn_error);
    case runner::Ending::timeout:
      if (stop_requested()) return host::probe_failed("was stopped by the interrupt");
      return host::probe_failed("did not answer within " + std::to_string(deadline.count() / 1000) +
                                " s (CUDA initialisation hung: check nvidia-smi and the kernel log)");
    case runner::Ending::signal:
      return host::probe_failed("was killed by " + out.signal_name +
                                " during CUDA initialisation (broken driver install?)");
    default:
      if (out.result.empty())
        return host::probe_failed("ended (" + std::string(runner::to_string(out.ending)) +
                                  (out.exit_code ? ", exit " + std::to_string(*out.exit_code) : "") +
                                  ") without an answer; stderr: " + out.err.text().substr(0, 300));
      break;
  }
  const auto nl = out.result.find('\n');
  const auto line = out.result.substr(0, nl);
  try {
    return host::summarize_probe(json::parse(line));
  } catch (const json::exception& e) {
    return host::probe_failed(std::string("wrote malformed JSON: ") + e.what());
  }
}

host::ProbeSummary probe_cuda_on(const host::HostFacts& facts, const std::string& self_exe,
                                 std::chrono::milliseconds deadline) {
  if (std::string why = evidence::gpu_unavailable(facts); !why.empty()) {
    host::ProbeSummary s;
    // A driver that lists devices but is too old for the runtime is a CUDA error.
    s.status = facts.gpu_status == report::DriverStatus::ok ? report::DriverStatus::cuda_error : facts.gpu_status;
    s.reason = std::move(why);
    return s;
  }
  return run_cuda_probe(self_exe, deadline, host::binding_env(facts.binding));
}

}  // namespace cudadiag::app

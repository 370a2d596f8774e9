// The CUDA probe child. It runs in its own process because a broken driver can crash
// or hang CUDA initialisation, and the parent must never initialise CUDA itself (the
// parent side, which spawns it and reads its answer, is probe_cuda.cpp).
#include "child_probe.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "commands.h"
#include "host/driver_probe.h"
#include "probe_cuda.h"
#include "report/report.h"
#include "runner/runner.h"
#include "util/exit_codes.h"
#include "util/fd_io.h"

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

}  // namespace cudadiag::app

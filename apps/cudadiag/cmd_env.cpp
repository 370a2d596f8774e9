// `cudadiag env`: the host fingerprint people forget to attach to a bug report.
// Host facts and NVML are read here (no CUDA); CUDA facts come from the
// `__probe-cuda` child. On a host without a driver or device the report is still
// complete and says which, and the exit code is 3.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "child_probe.h"
#include "cli_common.h"
#include "commands.h"
#include "host/cuda_probe.h"
#include "host/devices.h"
#include "host/nvml.h"
#include "host/system_info.h"
#include "host/xid.h"
#include "util/build_info.h"
#include "util/errors.h"
#include "util/exit_codes.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

using report::json;

constexpr const char* kDefaultKernelLog = "/dev/kmsg";

struct EnvOptions {
  CommonOptions common;
  double probe_timeout_s = 60.0;
  std::string kernel_log = kDefaultKernelLog;
  int xid_tail = 20;
};

// Every Xid still in the kernel log (most recent `tail`), with who it points at.
json kernel_log_section(const EnvOptions& opts) {
  const auto cursor = host::kernel_log_cursor(opts.kernel_log);
  json j{{"path", opts.kernel_log}, {"readable", cursor.readable}};
  if (!cursor.readable) {
    j["reason"] = cursor.reason + " (Xid lines need read access to the kernel log: root, or "
                                  "kernel.dmesg_restrict=0)";
    return j;
  }
  host::KernelLogCursor from_start = cursor;
  from_start.last_seq.reset();
  from_start.taken_at_us = 0;
  const auto events = host::new_xid_lines_since(from_start);
  j["xid_count"] = events.size();
  const size_t first = events.size() > static_cast<size_t>(opts.xid_tail) ? events.size() - opts.xid_tail : 0;
  j["xid_recent"] = host::to_json(std::vector<host::XidEvent>(events.begin() + static_cast<long>(first), events.end()));
  return j;
}

json driver_section(const json& nvml_snap, const host::ProbeSummary& probe) {
  json d = nvml_snap.value("driver", json::object());
  for (const auto& [k, v] : probe.driver.items()) d[k] = v;
  d["cuda_toolkit_built_with"] = build_info().cuda_toolkit;
  d["nvml"] = nvml_snap.value("nvml", json::object());
  return d;
}

void set_verdict(report::Report& r, const host::ProbeSummary& probe, const json& devices, const json& kernel_log) {
  r.verdict.status = report::parse_verdict_status(probe.status).value_or(report::VerdictStatus::probe_failed);
  r.verdict.reasons.push_back(probe.reason);
  const auto findings = host::device_health_findings(devices);
  if (probe.ran && !findings.empty()) r.verdict.status = report::VerdictStatus::findings;
  r.verdict.reasons.insert(r.verdict.reasons.end(), findings.begin(), findings.end());
  if (kernel_log.value("xid_count", 0) > 0) {
    int hardware = 0;
    for (const auto& x : kernel_log["xid_recent"])
      if (x.value("points_to", "") == "hardware") ++hardware;
    r.verdict.reasons.push_back(std::to_string(kernel_log["xid_count"].get<int>()) +
                                " Xid event(s) in the kernel log (" + std::to_string(hardware) +
                                " of the most recent point at hardware); see host.kernel_log");
  }
}

int exit_code_for(const report::Report& r, const host::ProbeSummary& probe) {
  if (!probe.ran) return kExitEnvironment;
  return r.verdict.status == report::VerdictStatus::findings ? kExitFindings : kExitOk;
}

void run_env(const EnvOptions& opts) {
  configure_logging(opts.common);
  if (opts.kernel_log != kDefaultKernelLog && ::access(opts.kernel_log.c_str(), R_OK) != 0)
    throw UsageError("--kernel-log: cannot read '" + opts.kernel_log + "': " + std::strerror(errno));
  const auto& inv = invocation();
  auto r = report::new_report(inv.argv, "env");

  json host = host::host_json();
  const json kernel_log = kernel_log_section(opts);
  host["kernel_log"] = kernel_log;

  spdlog::debug("reading NVML");
  const json nvml_snap = host::nvml_snapshot();
  spdlog::debug("running the CUDA probe child");
  const auto deadline = std::chrono::milliseconds(static_cast<long long>(opts.probe_timeout_s * 1000));
  const auto probe = run_cuda_probe(inv.self_exe, deadline);

  r.driver = report::driver_info_from_json(driver_section(nvml_snap, probe), "NVML snapshot and CUDA probe");
  const json devices = host::merge_devices(nvml_snap.value("devices", json::array()), probe.devices);
  r.devices = report::devices_from_json(devices, "NVML snapshot and CUDA probe");
  // Several GPUs: how each pair is connected (PCIe path, NVLink), as NVML tells it.
  if (nvml_snap.contains("topology")) host["gpu_topology"] = nvml_snap["topology"];
  r.host = report::host_info_from_json(host, "host fingerprint");
  r.environment = report::capture_environment(inv.envp);
  r.gpu = {probe.ran, probe.reason};
  set_verdict(r, probe, devices, kernel_log);
  if (!probe.ran) spdlog::warn("GPU part could not run: {}", probe.reason);

  report::finish_report(r);
  emit_report(r, opts.common);
  set_exit_code(exit_code_for(r, probe));
}

}  // namespace

void set_env_command(CLI::App& app) {
  auto opts = std::make_shared<EnvOptions>();
  auto* cmd = app.add_subcommand(
      "env", "Host fingerprint: OS, driver, CUDA versions, GPUs (NVML and CUDA views), ECC and "
             "row-remap state, recent Xid events, allowlisted environment");
  add_common_options(cmd, opts->common);
  cmd->add_option("--probe-timeout", opts->probe_timeout_s,
                  "Seconds the CUDA probe child may take before it is killed")
      ->check(seconds_between(1.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--kernel-log", opts->kernel_log,
                  "Kernel log to read Xid lines from (/dev/kmsg, or a saved kmsg/dmesg file)")
      ->capture_default_str();
  cmd->add_option("--xid-tail", opts->xid_tail, "How many of the most recent Xid events to list")
      ->check(integer_between(0, 10000))
      ->capture_default_str();
  cmd->callback([opts] { run_env(*opts); });
  set_probe_command(app);
}

}  // namespace cudadiag::app

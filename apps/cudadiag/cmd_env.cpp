// `cudadiag env`: the host fingerprint people forget to attach to a bug report.
// Host facts, NVML and the driver's device list are gathered as every command does
// (host/host_facts.h); CUDA runtime facts come from the `__probe-cuda` child, run only
// when the driver lists a device. On a host without a driver or device the report is
// still complete and says which, in every command's words, and the exit code is 3.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>

#include "probe_cuda.h"
#include "cli_common.h"
#include "commands.h"
#include "evidence/cuda_start.h"
#include "host/cuda_probe.h"
#include "host/devices.h"
#include "host/host_facts.h"
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
struct KernelLog {
  json section;
  std::size_t xid_count = 0;
  int hardware_recent = 0;  // of the listed ones, those that point at the hardware
};

KernelLog kernel_log_section(const EnvOptions& opts) {
  const auto cursor = host::kernel_log_cursor(opts.kernel_log);
  KernelLog log{json{{"path", opts.kernel_log}, {"readable", cursor.readable}}};
  json& j = log.section;
  if (!cursor.readable) {
    j["reason"] = cursor.reason + " (Xid lines need read access to the kernel log: root, or "
                                  "kernel.dmesg_restrict=0)";
    return log;
  }
  host::KernelLogCursor from_start = cursor;
  from_start.last_seq.reset();
  from_start.taken_at_us = 0;
  const auto events = host::new_xid_lines_since(from_start);
  const size_t first = events.size() > static_cast<size_t>(opts.xid_tail) ? events.size() - opts.xid_tail : 0;
  const std::vector<host::XidEvent> recent(events.begin() + static_cast<long>(first), events.end());
  for (const auto& e : recent)
    if (host::xid_meaning(e.xid).points_to == report::XidPointsTo::hardware) ++log.hardware_recent;
  log.xid_count = events.size();
  j["xid_count"] = events.size();
  j["xid_recent"] = host::to_json(recent);
  return log;
}

// The driver section every command writes, with the CUDA runtime probe's facts.
report::DriverInfo driver_section(const host::HostFacts& facts, const host::ProbeSummary& probe) {
  report::DriverInfo d = facts.driver;
  if (probe.driver.is_object())
    for (const auto& [k, v] : probe.driver.items()) d.facts.set(k, report::value_from_json(v));
  d.facts.set("cuda_toolkit_built_with", build_info().cuda_toolkit);
  return d;
}

void set_verdict(report::Report& r, const host::ProbeSummary& probe, const KernelLog& kernel_log) {
  r.verdict.status = host::verdict_of(probe.status);
  r.verdict.reasons.push_back(probe.reason);
  // A driver too old for the runtime cudadiag carries (a forward-compatibility package
  // can make an older driver work, so only when CUDA did not start).
  if (!probe.ran) {
    if (auto old = evidence::driver_too_old(r.driver); !old.empty() && old != probe.reason)
      r.verdict.reasons.push_back(std::move(old));
  }
  const auto findings = host::device_health_findings(r.devices);
  if (probe.ran && !findings.empty()) r.verdict.status = report::VerdictStatus::findings;
  r.verdict.reasons.insert(r.verdict.reasons.end(), findings.begin(), findings.end());
  if (kernel_log.xid_count > 0) {
    r.verdict.reasons.push_back(std::to_string(kernel_log.xid_count) + " Xid event(s) in the kernel log (" +
                                std::to_string(kernel_log.hardware_recent) +
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

  spdlog::debug("reading NVML and asking the CUDA driver");
  const auto facts = host::gather_host_facts(inv.self_exe);
  r.host = facts.host;
  const KernelLog kernel_log = kernel_log_section(opts);
  r.host.facts.set("kernel_log", report::value_from_json(kernel_log.section));
  const auto probe = probe_cuda_on(facts, inv.self_exe,
                                   std::chrono::milliseconds(static_cast<long long>(opts.probe_timeout_s * 1000)));

  r.driver = driver_section(facts, probe);
  r.devices = probe.ran ? report::devices_from_json(
                              host::merge_devices(facts.nvml_snapshot.value("devices", json::array()), probe.devices),
                              "NVML snapshot and CUDA probe")
                        : facts.devices;
  r.environment = report::capture_environment(inv.envp);
  r.gpu = {probe.ran, probe.reason};
  set_verdict(r, probe, kernel_log);
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
  set_help_footer(cmd, "Exit codes: 0 ok/healthy, 1 findings, 2 usage or input error, 3 GPU part could not run, 4 internal error.",
                  {"cudadiag env                                # this host at a glance",
                   "cudadiag env --kernel-log saved-dmesg.txt -o env.json"});
  cmd->callback([opts] { run_env(*opts); });
}

}  // namespace cudadiag::app

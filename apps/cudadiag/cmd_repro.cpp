// `cudadiag repro`: run a declarative suite on this host and say whether it behaves
// like a healthy one. The parent never calls CUDA: devices come from NVML, each case
// runs in a child pinned to its device, the verdict compares outcomes to expectations.
//
// Exit codes: 0 healthy; 1 suspect (names the cases), or interrupted (verdict
// "incomplete", report marked invocation.interrupted); 3 when the GPU part could not run
// (host-only cases such as TMA validation still run and are reported); 2 bad input.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "host/devices.h"
#include "host/nvml.h"
#include "host/system_info.h"
#include "profiles/profile.h"
#include "profiles/sanitizer_tool.h"
#include "suite/plan.h"
#include "suite/run_plan.h"
#include "suite/suite.h"
#include "suite/verdict.h"
#include "util/errors.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

using json = report::json;

struct ReproOptions {
  CommonOptions common;
  std::string suite = "default";
  std::string case_glob;
  std::string profiles;
  int jobs = 0;
  int repeat = 0;
  std::string devices = "all";
  int deadline_ms = 60000;
  bool list_suites = false;
};

std::atomic<bool> g_stop{false};
std::atomic<int> g_interrupts{0};

extern "C" void on_sigint(int) {
  g_stop.store(true);
  if (g_interrupts.fetch_add(1) >= 1) {
    // A second Ctrl-C: the user wants out now; children are in their own groups.
    ::_exit(kExitFindings);
  }
}

void install_sigint() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

// GPUs as NVML sees them (no CUDA in the parent), filtered by --devices.
std::vector<suite::DeviceTarget> select_devices(const json& nvml_snap, const std::string& spec,
                                                std::string& no_gpu_reason) {
  std::vector<suite::DeviceTarget> all;
  for (const auto& d : nvml_snap.value("devices", json::array())) {
    suite::DeviceTarget t;
    t.index = d.value("index", static_cast<int>(all.size()));
    t.uuid = d.contains("uuid") && d["uuid"].is_string() ? d["uuid"].get<std::string>() : "";
    t.name = d.contains("name") && d["name"].is_string() ? d["name"].get<std::string>() : "";
    all.push_back(t);
  }
  if (all.empty()) {
    const auto nvml = nvml_snap.value("nvml", json::object());
    no_gpu_reason = nvml.value("available", false) ? "no NVIDIA GPU found by NVML"
                                                   : "no NVIDIA driver: " + nvml.value("reason", std::string("NVML not available"));
    return all;
  }
  if (spec == "all") return all;
  std::vector<suite::DeviceTarget> out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long idx = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || idx < 0)
      throw UsageError("--devices: '" + item + "' is not a device index (use all or e.g. 0,2)");
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& d) { return d.index == idx; });
    if (it == all.end())
      throw UsageError("--devices: no device " + item + " on this host (" + std::to_string(all.size()) +
                       " device(s), indices 0.." + std::to_string(all.size() - 1) + ")");
    if (std::none_of(out.begin(), out.end(), [&](const auto& d) { return d.index == idx; })) out.push_back(*it);
  }
  return out;
}

int default_jobs(size_t devices) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  // Context creation contends on one GPU: eight children per device start together in
  // 1.5 s against 2.4 s one after another (H200); more would only queue on the driver.
  const size_t per_gpu = 8 * std::max<size_t>(1, devices);
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(cpus, per_gpu)));
}

// A CUDA child that could not start CUDA (no driver, no device) means the GPU part did
// not run: such results become skipped with the reason.
bool cuda_unusable(const report::Result& r, std::string& why) {
  if (r.outcome != "cuda_error" || !r.error) return false;
  const auto& c = r.error->error_class;
  if (c == "no_device" || c == "driver_mismatch") {
    why = "CUDA unusable: " + r.error->name + (r.error->message.empty() ? "" : " (" + r.error->message + ")");
    return true;
  }
  return false;
}

class Progress {
 public:
  Progress(size_t total, bool enabled) : total_(total), enabled_(enabled), t0_(std::chrono::steady_clock::now()) {}
  void add(const report::Result& r) {
    ++done_;
    if (r.expectation_met.has_value() && !*r.expectation_met) ++failing_;
    draw();
  }
  void finish() {
    if (enabled_ && drawn_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  void draw() {
    if (!enabled_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::fprintf(stderr, "\r\033[Krepro: %zu/%zu done, %zu unexpected, %.1f s", done_, total_, failing_, s);
    std::fflush(stderr);
    drawn_ = true;
  }
  size_t total_, done_ = 0, failing_ = 0;
  bool enabled_, drawn_ = false;
  std::chrono::steady_clock::time_point t0_;
};

std::string make_scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/cudadiag-repro-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw EnvironmentError("cannot create a scratch directory under " + tmpl);
  return tmpl;
}

// With -v: where the time went (setup, host cases, children, the longest children).
void log_phases(const suite::Plan& plan, const suite::RunOutcome& outcome, double setup_ms) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  double busy = 0.0;
  for (const auto& t : outcome.timings) busy += t.duration_ms;
  spdlog::debug("phases: setup {:.0f} ms, host cases {:.0f} ms, children {:.0f} ms wall ({} children, {:.0f} ms "
                "child time in all)",
                setup_ms, outcome.host_ms, outcome.wall_ms - outcome.host_ms, outcome.timings.size(), busy);
  auto by_length = outcome.timings;
  std::sort(by_length.begin(), by_length.end(),
            [](const auto& a, const auto& b) { return a.duration_ms > b.duration_ms; });
  for (size_t i = 0; i < by_length.size() && i < 8; ++i) {
    const auto& t = by_length[i];
    const auto& b = plan.batches[t.batch];
    spdlog::debug("  child {:>3}: {} {} case(s) from {} [{}], started at {:.0f} ms, ran {:.0f} ms (estimated {:.0f})",
                  t.batch, b.specs.size(), b.own_child ? "own" : "shared",
                  b.specs.empty() ? std::string("-") : b.specs.front().case_id, b.profile, t.start_ms,
                  t.duration_ms, b.est_cost_ms);
  }
}

void run_repro(const ReproOptions& opts) {
  const auto setup_t0 = std::chrono::steady_clock::now();
  configure_logging(opts.common);
  if (opts.list_suites) {
    std::string text;
    for (const auto& n : suite::embedded_suite_names()) {
      const auto s = suite::load_suite(n);
      text += n + "  (" + std::to_string(s.cases.size()) + " cases)  " + s.description + "\n";
    }
    emit_text(text, opts.common);
    set_exit_code(kExitOk);
    return;
  }

  // Everything the user gave is checked before anything runs.
  auto s = suite::load_suite(opts.suite);
  if (!opts.case_glob.empty()) suite::filter_cases(s, opts.case_glob);
  suite::PlanOptions popts;
  if (!opts.profiles.empty()) {
    try {
      for (const auto& p : profiles::parse_profile_list(opts.profiles)) popts.profiles_override.push_back(p.name);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--profiles: ") + e.what());
    }
  }
  popts.repeat_override = opts.repeat;

  const auto& inv = invocation();
  auto r = report::new_report(inv.argv, "repro");
  r.host = host::host_json();
  const json nvml_snap = host::nvml_snapshot();
  r.driver = nvml_snap.value("driver", json::object());
  r.driver["nvml"] = nvml_snap.value("nvml", json::object());
  r.devices = host::merge_devices(nvml_snap.value("devices", json::array()), nullptr);
  r.environment = report::capture_environment(inv.envp);

  std::string no_gpu_reason;
  popts.devices = select_devices(nvml_snap, opts.devices, no_gpu_reason);
  popts.no_gpu_reason = no_gpu_reason;

  bool wants_sanitizer = false;
  for (const auto& c : s.cases)
    for (const auto& p : (popts.profiles_override.empty() ? c.profiles : popts.profiles_override))
      wants_sanitizer = wants_sanitizer || profiles::parse_profile(p).sanitizer;
  profiles::SanitizerTool tool;
  if (wants_sanitizer) {
    tool = profiles::find_compute_sanitizer();
    popts.sanitizer_available = tool.found;
    popts.sanitizer_reason = tool.reason;
    if (!tool.found) spdlog::warn("sanitizer profile skipped: {}", tool.reason);
  }

  const auto plan = suite::make_plan(s, popts);
  const int jobs = opts.jobs > 0 ? opts.jobs : default_jobs(popts.devices.size());
  spdlog::info("suite {}: {} case runs ({} in {} children, {} on the host, {} skipped), -j {}", s.name,
               plan.total_runs(), plan.child_runs(), plan.batches.size(), plan.host_runs.size(),
               plan.skipped.size(), jobs);
  if (popts.devices.empty()) spdlog::warn("GPU part cannot run: {}", no_gpu_reason);

  suite::RunOptions ropts;
  ropts.self_exe = inv.self_exe;
  ropts.jobs = jobs;
  ropts.devices = popts.devices;
  ropts.default_deadline = std::chrono::milliseconds(opts.deadline_ms);
  ropts.sanitizer_path = tool.path;
  std::string scratch;
  if (tool.found) scratch = make_scratch_dir();
  ropts.scratch_dir = scratch;
  ropts.stop = &g_stop;
  Progress progress(plan.total_runs(), ::isatty(STDERR_FILENO) != 0 && !opts.common.quiet);
  std::mutex progress_mu;
  ropts.on_result = [&](const report::Result& res) {
    std::lock_guard<std::mutex> lock(progress_mu);
    progress.add(res);
  };

  install_sigint();
  const double setup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - setup_t0).count();
  auto outcome = suite::run_plan(s, plan, ropts);
  log_phases(plan, outcome, setup_ms);
  progress.finish();
  if (!scratch.empty()) ::rmdir(scratch.c_str());

  // CUDA that could not start in the children is an environment problem, not a finding.
  std::string cuda_reason;
  size_t gpu_results = 0, unusable = 0;
  for (auto& res : outcome.results) {
    if (res.device == "host" || res.device.empty()) continue;
    ++gpu_results;
    std::string why;
    if (cuda_unusable(res, why)) {
      ++unusable;
      cuda_reason = why;
      res.outcome = "skipped";
      res.reason = why;
      res.expectation_met.reset();
    }
  }
  const bool gpu_ran = !popts.devices.empty() && !(gpu_results > 0 && unusable == gpu_results);
  r.gpu = json{{"ran", gpu_ran},
               {"reason", !popts.devices.empty() ? (gpu_ran ? "" : cuda_reason) : no_gpu_reason}};

  r.results = std::move(outcome.results);
  r.invocation["interrupted"] = outcome.interrupted;
  json suite_section = suite::suite_json(s);
  suite_section["plan"] = json{{"case_runs", plan.total_runs()},   {"children_planned", plan.batches.size()},
                               {"children_started", outcome.children}, {"host_runs", plan.host_runs.size()},
                               {"skipped", plan.skipped.size()},   {"jobs", jobs},
                               {"wall_ms", outcome.wall_ms}};
  if (!popts.profiles_override.empty()) suite_section["profiles"] = popts.profiles_override;
  json devs = json::array();
  for (const auto& d : popts.devices) devs.push_back(json{{"index", d.index}, {"uuid", d.uuid}, {"name", d.name}});
  suite_section["devices"] = devs;
  if (wants_sanitizer)
    suite_section["sanitizer"] = json{{"found", tool.found}, {"path", tool.path}, {"reason", tool.reason}};
  r.extra["suite"] = suite_section;

  r.verdict = suite::decide_verdict(r.results, outcome.interrupted);
  if (!gpu_ran && r.verdict.status != "suspect")
    r.verdict.reasons.insert(r.verdict.reasons.begin(),
                             "GPU part could not run: " + r.gpu["reason"].get<std::string>());
  report::finish_report(r);
  emit_report(r, opts.common);
  int code = suite::exit_code_for(r.verdict, outcome.interrupted);
  spdlog::info("verdict: {} ({} results, {:.1f} s)", r.verdict.status, r.results.size(), outcome.wall_ms / 1000.0);
  set_exit_code(code);
}

}  // namespace

void set_repro_command(CLI::App& app) {
  auto opts = std::make_shared<ReproOptions>();
  auto* cmd = app.add_subcommand(
      "repro", "Run a suite of bundled cases under flag profiles and judge this host: healthy, suspect or "
               "incomplete");
  add_common_options(cmd, opts->common);
  cmd->add_option("--suite", opts->suite, "Built-in suite name or a suite JSON file (- reads stdin)")->capture_default_str();
  cmd->add_option("--case", opts->case_glob, "Only cases whose id matches this glob (e.g. 'fault.oob-*')");
  cmd->add_option("--profiles", opts->profiles,
                  "Comma-separated profiles overriding the suite's (default, blocking, nocache, fence, "
                  "sanitizer; combine with '+', e.g. blocking+fence)");
  cmd->add_option("-j,--jobs", opts->jobs, "Children at once (default: from the CPU and device count)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--repeat", opts->repeat, "Repeat every case N times (overrides the suite)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--devices", opts->devices, "GPUs to run on: all, or indices such as 0,2")->capture_default_str();
  cmd->add_option("--deadline-ms", opts->deadline_ms, "Deadline of a case without its own")
      ->check(CLI::Range(1, 3600000))
      ->capture_default_str();
  cmd->add_flag("--list-suites", opts->list_suites, "List the built-in suites and exit");
  cmd->footer(
      "Exit codes: 0 healthy, 1 suspect (or interrupted: verdict incomplete), 2 bad input, 3 the GPU part "
      "could not run (host-only cases still reported).");
  cmd->callback([opts] { run_repro(*opts); });
}

}  // namespace cudadiag::app

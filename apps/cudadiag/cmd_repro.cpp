// `cudadiag repro`: run a declarative suite on this host and say whether it behaves
// like a healthy one. The parent never calls CUDA: devices come from NVML, each case
// runs in a child pinned to its device, the verdict compares outcomes to expectations.
//
// Exit codes: 0 healthy; 1 suspect (names the cases), or interrupted (verdict
// "incomplete", report marked invocation.interrupted); 3 when the GPU part could not run
// (host-only cases such as TMA validation still run and are reported); 2 bad input.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "evidence/session_report.h"
#include "host/host_facts.h"
#include "profiles/profile.h"
#include "profiles/sanitizer_tool.h"
#include "repeat/seeds.h"
#include "suite/device_selection.h"
#include "suite/plan.h"
#include "suite/repro_report.h"
#include "suite/run_plan.h"
#include "suite/suite.h"
#include "util/errors.h"
#include "util/interrupt.h"
#include "util/log.h"
#include "util/scratch_dir.h"

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
  double timeout_s = 60;  // a case without its own deadline
  std::string seed;       // base of every case's repeat series
  bool list_suites = false;
  bool coredump = false;
};

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

// With -v: where the time went (setup, host cases, children, the longest children).
void log_phases(const suite::Plan& plan, const suite::SuiteOutcome& outcome, double setup_ms) {
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
    const auto& first = plan.runs[b.runs.front()];
    spdlog::debug("  child of batch {:>3}: {} {} case(s) from {} [{}], started at {:.0f} ms, ran {:.0f} ms "
                  "(estimated {:.0f})",
                  t.batch, b.runs.size(), b.own_child ? "own" : "shared", first.spec.case_id, first.profile.name,
                  t.start_ms, t.duration_ms, b.est_cost_ms);
  }
}

void list_suites(const CommonOptions& common) {
  std::string text;
  for (const auto& n : suite::embedded_suite_names()) {
    const auto s = suite::load_suite(n);
    text += n + "  (" + std::to_string(s.cases.size()) + " cases)  " + s.description + "\n";
  }
  emit_text(text, common);
  set_exit_code(kExitOk);
}

void run_repro(const ReproOptions& opts) {
  const auto setup_t0 = std::chrono::steady_clock::now();
  configure_logging(opts.common);
  if (opts.list_suites) return list_suites(opts.common);

  // Everything the user gave is checked before anything runs.
  auto s = suite::load_suite(opts.suite);
  if (!opts.case_glob.empty()) suite::filter_cases(s, opts.case_glob);
  suite::PlanOptions popts;
  if (!opts.profiles.empty()) {
    try {
      popts.profiles_override = profiles::parse_profile_list(opts.profiles);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--profiles: ") + e.what());
    }
  }
  popts.repeat_override = opts.repeat;
  try {
    popts.seed = repeat::seed_request(opts.seed, "");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  const auto& inv = invocation();
  const auto host_facts = host::gather_host_facts(inv.self_exe);
  auto header = evidence::start_session_report({inv.argv, "repro", inv.envp, &host_facts});
  popts.devices = suite::select_devices(host_facts, opts.devices, &popts.no_gpu_reason);

  suite::ReproFacts facts;
  for (const auto& p : suite::planned_profiles(s, popts)) facts.wants_sanitizer = facts.wants_sanitizer || p.sanitizer;
  if (facts.wants_sanitizer) {
    facts.sanitizer = profiles::find_compute_sanitizer();
    popts.sanitizer_available = facts.sanitizer.found;
    popts.sanitizer_reason = facts.sanitizer.reason;
    if (!facts.sanitizer.found) spdlog::warn("sanitizer profile skipped: {}", facts.sanitizer.reason);
  }

  const auto plan = suite::make_plan(s, popts);
  facts.jobs = opts.jobs > 0 ? opts.jobs : suite::default_jobs(popts.devices.size(), std::thread::hardware_concurrency());
  spdlog::info("suite {}: {} case runs ({} in {} children, {} on the host, {} skipped), -j {}", s.name,
               plan.total_runs(), plan.child_runs(), plan.batches.size(), plan.count(suite::Venue::host),
               plan.count(suite::Venue::skipped), facts.jobs);
  if (popts.devices.empty()) spdlog::warn("GPU part cannot run: {}", popts.no_gpu_reason);

  suite::SuiteRunOptions ropts;
  ropts.self_exe = inv.self_exe;
  ropts.jobs = facts.jobs;
  ropts.devices = popts.devices;
  ropts.default_deadline = std::chrono::milliseconds(static_cast<long long>(opts.timeout_s * 1000.0));
  ropts.sanitizer_path = facts.sanitizer.path;
  std::optional<ScratchDir> scratch;  // the sanitizer's XML files
  if (facts.sanitizer.found) ropts.scratch_dir = scratch.emplace("repro").path();
  ropts.stop = &stop_flag();
  ropts.coredump = opts.coredump;
  Progress progress(plan.total_runs(), ::isatty(STDERR_FILENO) != 0 && !opts.common.quiet);
  ropts.on_result = [&](const report::Result& res) { progress.add(res); };

  const double setup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - setup_t0).count();
  auto outcome = suite::run_plan(s, plan, ropts);
  log_phases(plan, outcome, setup_ms);
  progress.finish();

  const double wall_s = outcome.wall_ms / 1000.0;
  const bool interrupted = outcome.interrupted;
  auto r = suite::repro_report(std::move(header), s, popts, plan, std::move(outcome), facts);
  emit_report(r, opts.common);
  spdlog::info("verdict: {} ({} results, {:.1f} s)", report::to_string(r.verdict.status), r.results.size(), wall_s);
  set_exit_code(report::exit_code_for(r.verdict.status, interrupted));
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
                  "Comma-separated profiles overriding the suite's (" + profiles::base_profile_list() +
                      "; combine with '+', e.g. blocking+fence)");
  cmd->add_option("-j,--jobs", opts->jobs, "Children at once (default: from the CPU and device count)")
      ->check(integer_between(1, 1024));
  add_repeat_option(cmd, opts->repeat, "Repeat every case N times (overrides the suite)");
  add_seed_options(cmd, opts->seed, nullptr, "its inputs");
  cmd->add_option("--devices", opts->devices, "GPUs to run on: all, or indices within the ones this job may use (CUDA_VISIBLE_DEVICES, Slurm), e.g. 0,2")->capture_default_str();
  add_timeout_option(cmd, opts->timeout_s, "Seconds a case without its own deadline may take",
                     seconds_between(0.001, 3600.0))
      ->capture_default_str();
  add_deprecated_ms_alias(cmd, "--deadline-ms", opts->timeout_s, "--timeout", 3600000);
  cmd->add_flag("--list-suites", opts->list_suites, "List the built-in suites and exit");
  add_coredump_option(cmd, opts->coredump);
  set_help_footer(cmd,
                  "Exit codes: 0 healthy, 1 suspect (or interrupted: verdict incomplete), 2 bad input, 3 the GPU "
                  "part could not run (host-only cases still reported).",
                  {"cudadiag repro -o h100-a.json                  # the default suite, JSON",
                   "cudadiag repro --case 'fault.oob-*' --profiles fence"});
  cmd->callback([opts] { run_repro(*opts); });
}

}  // namespace cudadiag::app

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
#include <memory>
#include <optional>

#include "cli_common.h"
#include "commands.h"
#include "evidence/session_report.h"
#include "profiles/profile.h"
#include "suite/device_plan.h"
#include "suite/repro_report.h"
#include "suite/repro_request.h"
#include "suite/suite.h"
#include "util/errors.h"
#include "util/log.h"
#include "util/scratch_dir.h"

namespace cudadiag::app {
namespace {

struct ReproOptions {
  CommonOptions common;
  suite::Args args;  // typed as the options are read (set_repro_command)
  bool list_suites = false;
  bool plan_only = false;  // --plan
};

class Progress {
 public:
  explicit Progress(size_t total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
  void add(const report::Result& r) {
    ++done_;
    if (r.expectation_met.has_value() && !*r.expectation_met) ++failing_;
    draw();
  }
  void finish() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  void draw() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::fprintf(stderr, "\r\033[Krepro: %zu/%zu done, %zu unexpected, %.1f s", done_, total_, failing_, s);
    std::fflush(stderr);
    drawn_ = true;
  }
  size_t total_, done_ = 0, failing_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point t0_;
};

std::string suite_list_text() {
  std::string text;
  for (const auto& n : suite::embedded_suite_names()) {
    const auto s = suite::load_suite(n);
    text += n + "  (" + std::to_string(s.cases.size()) + " cases)  " + s.description + "\n";
  }
  return text;
}

// Resolve, run, report: every option is checked and looked up in resolve_request.
void run_repro(const ReproOptions& opts, bool show_progress) {
  const auto setup_t0 = std::chrono::steady_clock::now();
  if (opts.list_suites) {
    emit_text(suite_list_text(), opts.common);
    return set_exit_code(kExitOk);
  }

  auto request = suite::resolve_request(opts.args, parent_process());
  if (opts.plan_only) {
    emit_text(suite::plan_text(request.plan, request.plan_options.devices, request.facts.jobs), opts.common);
    return set_exit_code(kExitOk);
  }
  const auto& inv = invocation();
  auto header = evidence::start_session_report({inv.argv, "repro", inv.envp, &request.host});

  std::optional<ScratchDir> scratch;  // the sanitizer's XML files
  if (request.facts.sanitizer.found) request.run.scratch_dir = scratch.emplace("repro").path();
  std::optional<Progress> progress;
  if (show_progress) progress.emplace(request.plan.runs.size());
  request.run.on_result = [&](const report::Result& res) {
    if (progress) progress->add(res);
  };
  request.run.setup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - setup_t0).count();
  auto outcome = suite::run_plan(request.suite, request.plan, request.run);
  if (progress) progress->finish();

  const double wall_s = outcome.wall_ms / 1000.0;
  const bool interrupted = outcome.interrupted;
  auto r = suite::repro_report(std::move(header), request, std::move(outcome));
  emit_report(r, opts.common);
  spdlog::info("verdict: {} ({} results, {:.1f} s)", report::to_string(r.verdict.status), r.results.size(), wall_s);
  set_exit_code(report::exit_code_for(r.verdict.status, interrupted));
}

}  // namespace

void set_repro_command(CLI::App& app) {
  auto opts = std::make_shared<ReproOptions>();
  suite::Args& args = opts->args;
  auto* cmd = app.add_subcommand(
      "repro", "Run a suite of bundled cases under flag profiles and judge this host: healthy, suspect or "
               "incomplete");
  add_common_options(cmd, opts->common);
  cmd->add_option("--suite", args.suite, "Built-in suite name or a suite JSON file (- reads stdin)")->capture_default_str();
  cmd->add_option("--case", args.case_glob, "Only cases whose id matches this glob (e.g. 'fault.oob-*')");
  cmd->add_option_function<std::string>(
         "--profiles",
         [&args](const std::string& text) {
           try {
             args.profiles = profiles::parse_profile_list(text);
           } catch (const std::invalid_argument& e) {
             throw UsageError(std::string("--profiles: ") + e.what());
           }
         },
         "Comma-separated profiles overriding the suite's (" + profiles::base_profile_list() +
                      "; combine with '+', e.g. blocking+fence)");
  cmd->add_option("-j,--jobs", args.jobs, "Children at once (default: from the CPU and device count)")
      ->check(integer_between(1, 1024));
  add_repeat_option(cmd, args.repeat, "Repeat every case N times (overrides the suite)");
  add_seed_options(cmd, args.seed, nullptr, "its inputs");
  cmd->add_option("--devices", args.devices, "GPUs to run on: all, or indices within the ones this job may use (CUDA_VISIBLE_DEVICES, Slurm), e.g. 0,2")->capture_default_str();
  add_timeout_option(cmd, args.timeout_s, "Seconds a case without its own deadline may take",
                     seconds_between(0.001, 3600.0))
      ->capture_default_str();
  add_deprecated_ms_alias(cmd, "--deadline-ms", args.timeout_s, "--timeout", 3600000);
  cmd->add_flag("--list-suites", opts->list_suites, "List the built-in suites and exit");
  auto* plan_flag = cmd->add_flag("--plan", opts->plan_only,
                                  "Print the plan (children and cases per device, job slots each, estimated time) "
                                  "and exit without running anything");
  cmd->add_option("--plan-devices", args.plan_devices,
                  "With --plan: plan for N devices as if this host had them (e.g. an 8-GPU node)")
      ->check(integer_between(1, 1024))
      ->needs(plan_flag);
  add_coredump_option(cmd, args.coredump,
                      "a case that misses its expectation with a fault runs once more with GPU core dumps armed");
  set_help_footer(cmd,
                  "Exit codes: 0 healthy, 1 suspect (or interrupted: verdict incomplete), 2 bad input, 3 the GPU "
                  "part could not run (host-only cases still reported).",
                  {"cudadiag repro -o h100-a.json                  # the default suite, JSON",
                   "cudadiag repro --case 'fault.oob-*' --profiles fence",
                   "cudadiag repro --plan --plan-devices 8            # how 8 GPUs would share the suite"});
  cmd->callback([opts] {
    configure_logging(opts->common);
    run_repro(*opts, ::isatty(STDERR_FILENO) != 0 && !opts->common.quiet);
  });
}

}  // namespace cudadiag::app

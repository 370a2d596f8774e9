// `cudadiag run [options] -- CMD [ARGS...]`: the user's own program on the ladder of
// rungs (native, blocking, fence, fence-front, sanitizer), judged run by run, with one verdict:
// exposed (which rung, and the most precise evidence), clean, flaky, does_not_start or
// inconclusive. The parent never calls CUDA; lib/run does the work.
//
// Exit codes: 0 clean; 1 exposed, flaky, inconclusive, or interrupted; 2 bad input, or a
// command that cannot be found or started; 3 CUDA could not start in the program.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "cli_common.h"
#include "coredump/arming.h"
#include "coredump/disassembler.h"
#include "commands.h"
#include "fence/interposer_limits.h"
#include "evidence/session_report.h"
#include "evidence/cuda_start.h"
#include "host/host_facts.h"
#include "run/command_path.h"
#include "run/preload_path.h"
#include "run/run_report.h"
#include "run/run_session.h"
#include "util/errors.h"
#include "util/interrupt.h"
#include "util/log.h"
#include "util/safe_path.h"
#include "util/scratch_dir.h"

namespace cudadiag::app {
namespace {

using report::json;

struct RunCliOptions {
  CommonOptions common;
  std::vector<std::string> command;
  std::string rungs = "native,blocking,fence,fence-front,sanitizer";
  std::string sanitize = "auto";
  bool stop_at_first = false;
  int repeat = 1;
  double timeout_s = 3600;
  std::vector<std::string> env;
  std::uint32_t fence_align = 16;
  bool fence_front = false;
  long long quarantine_mb = -1;
  long long recycle_mb = static_cast<long long>(run::kDefaultRecycleMb);
  bool no_kernel_log = false;
  std::string keep_dumps;
  bool coredump = false;
};

run::SessionOptions session_options(const RunCliOptions& o, const std::string& work_dir) {
  run::SessionOptions s;
  s.env = run::parse_env_assignments(o.env);
  auto& run = s.run;
  run.rungs = run::parse_rungs(o.rungs);
  run.sanitize = run::parse_sanitize_mode(o.sanitize);
  run.stop_at_first = o.stop_at_first;
  run.repeat = o.repeat;
  run.fence_align = o.fence_align;
  run.fence_side = o.fence_front ? run::FenceSide::front : run::FenceSide::back;
  if (o.quarantine_mb >= 0) run.quarantine_mb = static_cast<std::uint64_t>(o.quarantine_mb);
  run.recycle_mb = static_cast<std::uint64_t>(o.recycle_mb);
  run.work_dir = work_dir;
  if (const char* p = std::getenv("LD_PRELOAD")) run.user_ld_preload = p;
  if (o.timeout_s <= 0) throw UsageError("--timeout: expected a positive number of seconds");
  s.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000.0));
  s.stop = &stop_flag();
  if (o.no_kernel_log) s.kernel_log.clear();

  // The command is looked up on the PATH it will get, before anything runs.
  s.command_as_given = o.command;
  if (o.command.empty()) throw UsageError("run: no command given (usage: cudadiag run [options] -- CMD [ARGS...])");
  const auto path_it = s.env.find("PATH");
  const char* inherited_path = std::getenv("PATH");
  const auto found = run::find_command(
      o.command.front(), path_it != s.env.end() ? path_it->second : (inherited_path ? inherited_path : ""));
  if (!found.found()) throw UsageError("run: cannot run the command: " + found.error);
  run.command = o.command;
  run.command.front() = found.path;

  // GPU core dumps: with --coredump, a failing rung runs once more armed (rungs.h says
  // why the verdict's own runs are never armed), unless the user set the driver's
  // variables (inherited or --env): those are respected, never overwritten.
  run.coredump = o.coredump;
  std::vector<std::string> names;
  for (char** e = invocation().envp; e && *e; ++e) {
    const std::string_view kv(*e);
    names.emplace_back(kv.substr(0, kv.find('=')));
  }
  for (const auto& [name, value] : s.env) names.push_back(name);
  run.user_coredump_vars = coredump::user_coredump_variables(names);
  if (!o.keep_dumps.empty()) {
    (void)open_directory(o.keep_dumps);  // UsageError naming it when it is no directory
    s.keep_dumps = o.keep_dumps;
  }
  if (run.coredump && run.user_coredump_vars.empty()) {
    const auto tool = coredump::find_nvdisasm();
    s.disassemble = coredump::disassemble_with(tool);
    s.no_disassembler_reason = tool.reason;
  }

  const auto candidates = run::interposer_candidates(invocation().self_exe);
  for (const auto& c : candidates)
    if (run::probe_file(c) != run::FileKind::missing) {
      run.interposer_path = c;
      break;
    }
  if (run.interposer_path.empty())
    run.interposer_missing_reason = fmt::format(
        "neither {} nor {} exists (it is built next to the cudadiag binary and installed in lib/cudadiag/)",
        candidates[0], candidates[1]);
  return s;
}

void run_run(const RunCliOptions& o) {
  configure_logging(o.common);
  const ScratchDir work("run");  // the rings and memcheck's XML
  auto s = session_options(o, work.path());
  // LD_PRELOAD splits on spaces and colons: an interposer under such a path goes through a link.
  const run::PreloadPath preload(s.run.interposer_path, work.path());
  s.run.preload_path = preload.path();

  const auto& inv = invocation();
  const auto host_facts = host::gather_host_facts(inv.self_exe);
  auto header = evidence::start_session_report({inv.argv, "run", inv.envp, &host_facts});
  run::RunFacts facts;
  facts.no_gpu_reason = evidence::gpu_unavailable(host_facts);
  const bool wants_sanitizer = s.run.sanitize == run::SanitizeMode::always ||
                               (s.run.sanitize == run::SanitizeMode::automatic &&
                                std::find(s.run.rungs.begin(), s.run.rungs.end(), run::Rung::sanitizer) !=
                                    s.run.rungs.end());
  if (wants_sanitizer) {
    facts.sanitizer = profiles::find_compute_sanitizer();
    s.run.sanitizer_path = facts.sanitizer.path;
    s.run.sanitizer_missing_reason = facts.sanitizer.reason;
  }
  if (s.run.interposer_path.empty()) spdlog::warn("fence rung skipped: {}", s.run.interposer_missing_reason);

  run::SessionProgress progress;
  progress.started = [](const run::PlannedRun& p) {
    spdlog::info("run: {} rung{}...", run::to_string(p.rung),
                 p.repeat_index > 0 ? " #" + std::to_string(p.repeat_index) : std::string());
  };
  progress.judged = [](const run::SessionRun& r) {
    spdlog::info("run: {}: {} ({:.1f} s)", run::to_string(r.judgement.rung), run::to_string(r.judgement.outcome),
                 r.observation.child.wall_ms / 1000.0);
  };
  progress.site_run = [](const run::PlannedRun& p) {
    spdlog::info("run: {}: once more with GPU core dumps armed, for the site...", run::to_string(p.rung));
  };
  const auto outcome = run::run_session(s, progress);

  auto r = run::run_report(std::move(header), s, outcome, facts);
  report::RedactionInputs secrets;
  secrets.env.assign(s.env.begin(), s.env.end());  // --env values may be tokens
  emit_report(r, o.common, secrets);
  spdlog::info("verdict: {} ({} runs, {:.1f} s)", report::to_string(r.verdict.status), outcome.runs.size(),
               outcome.wall_ms / 1000.0);
  set_exit_code(run::exit_code_of(outcome.verdict, outcome.stopped));
}

}  // namespace

void set_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunCliOptions>();
  auto* cmd = app.add_subcommand(
      "run", "Run your own program on a ladder of rungs (native, blocking + caching off, guard-page fence, "
             "memcheck) and say which rung exposes its memory fault, and where");
  add_common_options(cmd, opts->common);
  cmd->add_option("command", opts->command, "The command to run, after --: cudadiag run [options] -- CMD [ARGS...]")
      ->expected(-1);
  cmd->add_option("--rungs", opts->rungs, "Rungs to run, in any order (they run bottom-up): native, blocking, fence "
                                          "(guards after every buffer), fence-front (guards before), sanitizer")
      ->capture_default_str();
  cmd->add_option("--sanitize", opts->sanitize,
                  "auto: memcheck when an earlier rung found something, or when the fence could not watch some "
                  "allocations (managed memory, a pool it does not see); always; never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("--stop-at-first", opts->stop_at_first, "Stop after the first rung that fails (all its repeats run)");
  add_repeat_option(cmd, opts->repeat, "Run every rung N times (failure rates with 95% Wilson intervals)")
      ->capture_default_str();
  add_timeout_option(cmd, opts->timeout_s,
                     "Seconds one run may take before its process group is ended (memcheck runs get 10 times this)",
                     number_between(0.0, 1e7, "seconds", /*open_min=*/true))
      ->capture_default_str();
  // One value per --env: the command after -- must never be taken for more values.
  cmd->add_option("--env", opts->env, "NAME=VALUE for the program, in every rung (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--fence-align", opts->fence_align,
                  "Alignment of fenced pointers, a power of two from 1 to 4096 (larger: an overrun may land in "
                  "rounding slack)")
      ->check(integer_between(1, 4096))
      ->capture_default_str();
  cmd->add_flag("--fence-front", opts->fence_front, "The fence rung guards the start of every allocation instead (underruns fault), and no "
                "fence-front rung runs (by default both ends are guarded, in two runs)");
  cmd->add_option("--fence-quarantine-mb", opts->quarantine_mb,
                  "Address space kept reserved for freed buffers, MiB (default: the interposer's, 1024)")
      ->check(integer_between(0, static_cast<long long>(fence::kMaxQuarantineMb)));
  cmd->add_option("--fence-recycle-mb", opts->recycle_mb,
                  "Freed memory the fence rung keeps mapped for the next buffer of its size, MiB: no driver call "
                  "per buffer, but no use-after-free watch in that rung (the fence-front rung keeps it); 0: off")
      ->check(integer_between(0, static_cast<long long>(fence::kMaxRecycleMb)))
      ->capture_default_str();
  cmd->add_flag("--no-kernel-log", opts->no_kernel_log, "Do not read the kernel log (Xid lines)");
  cmd->add_option("--keep-dumps", opts->keep_dumps,
                  "Keep the GPU core dumps of the runs in this directory (default: removed once read)");
  add_coredump_option(cmd, opts->coredump);
  set_help_footer(cmd,
                  "Exit codes: 0 clean, 1 exposed/flaky/inconclusive (or interrupted), 2 bad input or a command "
                  "that cannot be found or started, 3 CUDA could not start in the program.",
                  {"cudadiag run -- python3 train.py",
                   "cudadiag run --repeat 10 --timeout 600 -o run.json -- ./my_app"});
  cmd->callback([opts] { run_run(*opts); });
}

}  // namespace cudadiag::app

// `cudadiag run [options] -- CMD [ARGS...]`: the user's own program on the ladder of
// rungs (native, blocking, fence, fence-front, sanitizer), judged run by run, with one verdict:
// exposed (which rung, and the most precise evidence), clean, flaky, does_not_start or
// inconclusive. The parent never calls CUDA; lib/run does the work.
//
// Exit codes: 0 clean; 1 exposed, flaky, inconclusive, or interrupted; 2 bad input, or a
// command that cannot be found or started; 3 CUDA could not start in the program.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "coredump/arming.h"
#include "fence/interposer_limits.h"
#include "evidence/session_report.h"
#include "run/preload_path.h"
#include "run/run_report.h"
#include "run/run_request.h"
#include "run/run_session.h"
#include "util/errors.h"
#include "util/log.h"
#include "util/scratch_dir.h"

namespace cudadiag::app {
namespace {

struct RunCliOptions {
  CommonOptions common;
  run::Args args;  // typed as the options are read (set_run_command)
};

run::SessionProgress log_progress() {
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
  return progress;
}

// `--`: where the program's own words start on the command line.
constexpr std::string_view kEndOfOptions = "--";

// The `run` subcommand, for run_extras_hint to know it by.
const CLI::App* g_run_command = nullptr;

bool is_option_word(const std::string& a) { return a.size() > 1 && a[0] == '-'; }

// Without `--`, CLI11 reads an option anywhere on the line as ours: in `cudadiag run
// ./app --repeat 3` the program would lose its --repeat without a word. An option word
// after the command's first word is refused unless `--` marks where the program starts.
void refuse_options_after_command(const CLI::App& cmd, const std::vector<std::string>& argv) {
  std::size_t i = 1;
  while (i < argv.size() && argv[i] != cmd.get_name()) ++i;
  std::string program;
  for (++i; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == kEndOfOptions) return;
    if (!is_option_word(a)) {
      if (program.empty()) program = a;
      continue;
    }
    if (!program.empty())
      throw UsageError("'" + a + "' after the command '" + program + "' was read as cudadiag's option; put " +
                       "cudadiag's options first and the program after --: cudadiag run [options] -- " + program +
                       " ...");
    if (a.find('=') != std::string::npos) continue;
    const CLI::Option* opt = cmd.get_option_no_throw(a);
    if (opt && opt->get_items_expected_min() > 0) ++i;  // the option's value (a flag takes none)
  }
}

// Resolve, run, report: every option is checked and looked up in resolve_request.
void run_run(const RunCliOptions& o) {
  const ScratchDir work("run");  // the rings and memcheck's XML
  auto request = run::resolve_request(o.args, parent_process(), work.path());
  auto& ladder = request.session.run;
  // LD_PRELOAD splits on spaces and colons: an interposer under such a path goes through a link.
  const run::PreloadPath preload(ladder.interposer_path, work.path());
  ladder.preload_path = preload.path();
  if (ladder.interposer_path.empty()) spdlog::warn("fence rung skipped: {}", ladder.interposer_missing_reason);
  if (ladder.coredump && !ladder.user_coredump_vars.empty())
    spdlog::warn("{}", coredump::user_settings_line(ladder.user_coredump_vars));

  const auto& inv = invocation();
  auto header = evidence::start_session_report({inv.argv, "run", inv.envp, &request.host});
  const auto outcome = run::run_session(request.session, log_progress());

  auto r = run::run_report(std::move(header), request, outcome);
  report::RedactionInputs secrets;
  secrets.env.assign(request.session.env.begin(), request.session.env.end());  // --env values may be tokens
  emit_report(r, o.common, secrets);
  spdlog::info("verdict: {} ({} runs, {:.1f} s)", report::to_string(r.verdict.status), outcome.runs.size(),
               outcome.wall_ms / 1000.0);
  set_exit_code(run::exit_code_of(outcome.verdict, outcome.stopped));
}

}  // namespace

std::string run_extras_hint(const CLI::App* command, const std::vector<std::string>& argv) {
  if (command == nullptr || command != g_run_command) return "";
  if (std::find(argv.begin(), argv.end(), kEndOfOptions) != argv.end()) return "";
  return "; if these are the program's arguments, put the program after --: cudadiag run [options] -- CMD [ARGS...]";
}

void set_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunCliOptions>();
  run::Args& args = opts->args;
  auto* cmd = app.add_subcommand(
      "run", "Run your own program on a ladder of rungs (native, blocking + caching off, guard-page fence, "
             "memcheck) and say which rung exposes its memory fault, and where");
  g_run_command = cmd;
  add_common_options(cmd, opts->common);
  cmd->add_option("command", args.command, "The command to run, after --: cudadiag run [options] -- CMD [ARGS...]")
      ->expected(-1);
  cmd->add_option_function<std::string>(
         "--rungs",
         [&args](const std::string& text) {
           args.rungs = run::parse_rungs(text);
           args.rungs_given = true;
         },
         "Rungs to run, in any order (they run bottom-up): native, blocking, fence "
         "(guards after every buffer), fence-front (guards before), sanitizer")
      ->default_str("native,blocking,fence,fence-front,sanitizer");
  cmd->add_option_function<std::string>(
         "--sanitize", [&args](const std::string& text) { args.sanitize = run::parse_sanitize_mode(text); },
         "auto: memcheck when an earlier rung found something, or when the fence could not watch some "
                  "allocations (managed memory, a pool it does not see); always; never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_str("auto");
  cmd->add_flag("--stop-at-first", args.stop_at_first, "Stop after the first rung that fails (all its repeats run)");
  add_repeat_option(cmd, args.repeat, "Run every rung N times (failure rates with 95% Wilson intervals)")
      ->capture_default_str();
  add_timeout_option(cmd, args.timeout_s,
                     "Seconds one run may take before its process group is ended (memcheck runs get 10 times this)",
                     number_between(0.0, 1e7, "seconds", /*open_min=*/true))
      ->capture_default_str();
  // One value per --env: the command after -- must never be taken for more values.
  cmd->add_option_function<std::vector<std::string>>(
         "--env", [&args](const std::vector<std::string>& items) { args.env = run::parse_env_assignments(items); },
         "NAME=VALUE for the program, in every rung (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--fence-align", args.fence_align,
                  "Alignment of fenced pointers, a power of two from 1 to 4096 (larger: an overrun may land in "
                  "rounding slack)")
      ->check(integer_between(1, 4096))
      ->capture_default_str();
  cmd->add_flag_callback("--fence-front", [&args] { args.fence_side = run::FenceSide::front; },
                         "The fence rung guards the start of every allocation instead (underruns fault), and no "
                         "fence-front rung runs (by default both ends are guarded, in two runs)");
  cmd->add_option_function<long long>(
         "--fence-quarantine-mb", [&args](long long mb) { args.quarantine_mb = static_cast<std::uint64_t>(mb); },
         "Address space kept reserved for freed buffers, MiB (default: the interposer's, 1024)")
      ->check(integer_between(0, static_cast<long long>(fence::kMaxQuarantineMb)));
  cmd->add_option_function<long long>(
         "--fence-recycle-mb", [&args](long long mb) { args.recycle_mb = static_cast<std::uint64_t>(mb); },
         "Freed memory the fence rung keeps mapped for the next buffer of its size, MiB: no driver call "
                  "per buffer, but no use-after-free watch in that rung (the fence-front rung keeps it); 0: off")
      ->check(integer_between(0, static_cast<long long>(fence::kMaxRecycleMb)))
      ->default_str(std::to_string(run::kDefaultRecycleMb));
  cmd->add_flag("--no-kernel-log", args.no_kernel_log, "Do not read the kernel log (Xid lines)");
  cmd->add_option("--keep-dumps", args.keep_dumps,
                  "Keep the GPU core dumps of the runs in this directory (default: removed once read)");
  add_coredump_option(cmd, args.coredump, "a failing rung runs once more with GPU core dumps armed");
  set_help_footer(cmd,
                  "Exit codes: 0 clean, 1 exposed/flaky/inconclusive (or interrupted), 2 bad input or a command "
                  "that cannot be found or started, 3 CUDA could not start in the program.",
                  {"cudadiag run -- python3 train.py",
                   "cudadiag run --repeat 10 --timeout 600 -o run.json -- ./my_app"});
  cmd->callback([opts, cmd] {
    refuse_options_after_command(*cmd, invocation().argv);
    configure_logging(opts->common);
    run_run(*opts);
  });
}

}  // namespace cudadiag::app

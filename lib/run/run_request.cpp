#include "run/run_request.h"

#include <fmt/format.h>

#include <algorithm>

#include "coredump/arming.h"
#include "coredump/disassembler.h"
#include "evidence/cuda_start.h"
#include "profiles/sanitizer_tool.h"
#include "run/command_path.h"
#include "util/errors.h"
#include "util/safe_path.h"

namespace cudadiag::run {
namespace {

std::string inherited(const evidence::Parent& parent, const char* name) {
  const char* v = parent.getenv ? parent.getenv(name) : nullptr;
  return v ? v : "";
}

}  // namespace

Request resolve_request(const Args& args, const evidence::Parent& parent, const std::string& work_dir) {
  Request req;
  SessionOptions& s = req.session;
  s.env = args.env;
  RunOptions& run = s.run;
  run.rungs = args.rungs;
  run.sanitize = args.sanitize;
  run.stop_at_first = args.stop_at_first;
  run.repeat = args.repeat;
  run.fence_align = args.fence_align;
  run.fence_side = args.fence_side;
  run.quarantine_mb = args.quarantine_mb;
  run.recycle_mb = args.recycle_mb;
  run.work_dir = work_dir;
  run.rungs_asked = args.rungs_given || args.sanitize == SanitizeMode::always;
  // The program's own LD_PRELOAD comes after ours on the fence rung: --env's, if given.
  if (const auto it = s.env.find("LD_PRELOAD"); it != s.env.end())
    run.user_ld_preload = it->second;
  else if (const char* p = parent.getenv ? parent.getenv("LD_PRELOAD") : nullptr)
    run.user_ld_preload = p;
  if (args.timeout_s <= 0) throw UsageError("--timeout: expected a positive number of seconds");
  if (args.sanitize == SanitizeMode::never && args.rungs_given &&
      std::find(args.rungs.begin(), args.rungs.end(), Rung::sanitizer) != args.rungs.end())
    throw UsageError("--sanitize never contradicts --rungs naming the sanitizer rung: leave sanitizer out of "
                     "--rungs, or drop --sanitize never");
  s.timeout = std::chrono::milliseconds(static_cast<long long>(args.timeout_s * 1000.0));
  s.stop = parent.stop;
  if (args.no_kernel_log) s.kernel_log.clear();

  // The command is looked up on the PATH it will get, before anything runs.
  s.command_as_given = args.command;
  if (args.command.empty()) throw UsageError("run: no command given (usage: cudadiag run [options] -- CMD [ARGS...])");
  const auto path_it = s.env.find("PATH");
  const auto found =
      find_command(args.command.front(), path_it != s.env.end() ? path_it->second : inherited(parent, "PATH"));
  if (!found.found()) throw UsageError("run: cannot run the command: " + found.error);
  run.command = args.command;
  run.command.front() = found.path;

  // GPU core dumps (on unless --no-coredump): a failing rung runs once more armed
  // (rungs.h says why the verdict's own runs are never armed), unless the user set the
  // driver's variables (inherited or --env): those are respected, never overwritten.
  run.coredump = args.coredump;
  std::vector<std::string> names = parent.env_names;
  for (const auto& [name, value] : s.env) names.push_back(name);
  run.user_coredump_vars = coredump::user_coredump_variables(names);
  if (!args.keep_dumps.empty()) {
    // Dumps are armed unless --no-coredump, and never over the user's own variables.
    if (!run.coredump)
      throw UsageError("--keep-dumps: no GPU core dumps are armed to keep (--no-coredump turns them off): drop one of "
                       "the two");
    if (!run.user_coredump_vars.empty()) {
      std::string set;
      for (const auto& v : run.user_coredump_vars) set += (set.empty() ? "" : ", ") + v;
      throw UsageError("--keep-dumps: the GPU core dump variables already set (" + set +
                       ") are respected, so cudadiag arms and reads no dumps of its own: drop --keep-dumps, or "
                       "unset them");
    }
    (void)open_directory(args.keep_dumps);  // UsageError naming it when it is no directory
    s.keep_dumps = args.keep_dumps;
  }
  if (run.coredump && run.user_coredump_vars.empty()) {
    const auto tool = coredump::find_nvdisasm("", parent.getenv);
    s.disassemble = coredump::disassemble_with(tool);
    s.no_disassembler_reason = tool.reason;
  }

  const auto candidates = interposer_candidates(parent.self_exe);
  for (const auto& c : candidates)
    if (probe_file(c) != FileKind::missing) {
      run.interposer_path = c;
      break;
    }
  if (run.interposer_path.empty())
    run.interposer_missing_reason = fmt::format(
        "neither {} nor {} exists (it is built next to the cudadiag binary and installed in lib/cudadiag/)",
        candidates[0], candidates[1]);

  check_run_options(run);

  // What the parent knows of the host, gathered once for the session and its report.
  if (parent.host_facts) req.host = parent.host_facts();
  req.facts.no_gpu_reason = evidence::gpu_unavailable(req.host);
  const bool wants_sanitizer =
      run.sanitize == SanitizeMode::always ||
      (run.sanitize == SanitizeMode::automatic &&
       std::find(run.rungs.begin(), run.rungs.end(), Rung::sanitizer) != run.rungs.end());
  if (wants_sanitizer) {
    req.facts.sanitizer = profiles::find_compute_sanitizer(parent.getenv);
    run.sanitizer_path = req.facts.sanitizer.path;
    run.sanitizer_missing_reason = req.facts.sanitizer.reason;
  }
  return req;
}

}  // namespace cudadiag::run

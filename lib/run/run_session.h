#pragma once
// One `cudadiag run` from plan to verdict: the user's command runs once per planned
// rung and repeat, one child at a time, through the runner (own process group, its
// deadline, bounded capture, no result pipe: the program is not ours). Around each run:
// the kernel log is read before and after (Xid lines of the command's pid and of every
// CUDA process the rings name), the interposer's rings are read on the fence rung,
// memcheck's XML on the sanitizer rung; the run is judged; the ladder decides whether
// to go on. A stop request (stop_flag) starts nothing more and ends the running child
// (SIGTERM to its group, SIGKILL stop_grace later, at once on a second signal): the runs
// that finished are still judged, the one cut short is kept apart (interrupted, never
// judged). Whatever a run leaves alive (descendants in a session of their own too) is
// killed at its end and named in its child outcome (runner.h).
//
// A long --repeat series holds what the report can show, not every run: a rung keeps the
// output, kernel-log lines, ring records and memcheck findings of its first failing run
// and of its latest run only; every run keeps its judgement, duration and leftovers.
// Nothing here calls CUDA.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coredump/disassembler.h"
#include "host/xid.h"
#include "run/breaking_setting.h"
#include "run/judge.h"
#include "run/run_verdict.h"
#include "run/rungs.h"
#include "runner/runner.h"
#include "util/interrupt.h"

namespace cudadiag::run {

// "--env NAME=VALUE" (every rung gets it; a rung's own settings are applied on top).
// Throws UsageError naming --env and the text for anything but NAME=VALUE with a
// portable name.
std::map<std::string, std::string> parse_env_assignments(const std::vector<std::string>& items);

struct SessionOptions {
  // The ladder (rungs.h), lookups done; run.command[0] is the executable's path (as
  // resolved on PATH), command_as_given what the user typed (the report's parameters).
  RunOptions run;
  std::vector<std::string> command_as_given;
  std::map<std::string, std::string> env;           // --env
  std::chrono::milliseconds timeout{3600 * 1000};   // per run
  // memcheck slows a program by an order of magnitude: its runs get this many times
  // the timeout.
  int sanitizer_timeout_factor = 10;
  // A run of a rung above native that takes 10 times the native run, and at least this
  // long, is ended as hung (breaking_setting.h: rung_deadline); the timeout still caps it.
  std::chrono::milliseconds hung_floor = kHungFloor;
  std::chrono::milliseconds grace{5000};            // SIGTERM -> SIGKILL
  std::size_t capture_limit = 256 * 1024;           // per stream: head and tail kept
  const std::atomic<bool>* stop = nullptr;
  std::chrono::milliseconds stop_grace = kStopGrace;  // on a stop: SIGTERM, this long, SIGKILL
  std::string kernel_log = "/dev/kmsg";             // "" : not read
  // GPU core dumps (armed by the plan, coredump/arming.h): read after each run with this
  // disassembler (empty: none, for the reason given), kept in keep_dumps ("" : removed
  // once read), not read beyond max_dump_bytes. At a deadline the driver's pipe is
  // written first and the dump awaited for dump_wait at most, then the run is ended.
  coredump::DisassembleFn disassemble;
  std::string no_disassembler_reason = "no disassembler was looked for";
  std::string keep_dumps;
  std::uint64_t max_dump_bytes = std::uint64_t{512} << 20;
  std::chrono::milliseconds dump_wait{30000};
};

struct SessionRun {
  PlannedRun planned;
  RunObservation observation;
  RunJudgement judgement;
  bool observation_dropped = false;  // a repeat the report does not show: output etc. released
};

// Releases what the report cannot show of runs.back()'s predecessor in the same rung
// (neither the rung's first failing run nor its latest any more). Called after each run.
void drop_unshown_observation(std::vector<SessionRun>& runs);

struct SessionOutcome {
  std::vector<RungPlan> plan;
  // Judged, in the order they ran. Only a rung's first failing run and its latest one
  // keep what was observed of them (output, Xid lines, rings, memcheck): the others keep
  // their judgement, duration and leftovers (observation_dropped).
  std::vector<SessionRun> runs;
  std::vector<SkippedRung> skipped;          // planned rungs (or their remaining repeats) not run, and why
  std::vector<RunObservation> interrupted;   // runs ended by the stop request: not judged
  bool stopped = false;                      // a stop request ended the session early
  bool kernel_log_read = false;              // the kernel log could be read around the runs
  std::string kernel_log_reason;             // why not
  std::vector<BreakingSetting> breaking;  // rung settings that broke the program, found by bisection
  std::string memcheck_reason;   // why the sanitizer rung ran ("": it did not)
  std::string memcheck_kernel;   // memcheck was limited to kernels with this in their name
  RunVerdict verdict;
  double wall_ms = 0.0;
};

// How one planned run starts: its argv, the environment (--env, minus what the rung
// unsets, plus what it sets), the deadline (longer under the sanitizer), no result pipe.
runner::ChildSpec child_spec_for(const PlannedRun& run, const SessionOptions& opts);

// The kernel-log events of one run (evidence/kernel_log.h: the policy repro follows
// too; runs go one at a time): lines naming one of `pids`, and, when the run failed
// (`failed`: it exited non-zero, died or timed out), lines without a pid logged while it
// ran; each line once.
std::vector<host::XidEvent> xid_lines_of_run(const std::vector<host::XidEvent>& events, const std::vector<int>& pids,
                                             std::uint64_t start_us, std::uint64_t end_us, bool failed);

// Called as the session goes: before a run starts, and after it was judged.
struct SessionProgress {
  std::function<void(const PlannedRun&)> started;
  std::function<void(const SessionRun&)> judged;
  std::function<void(const PlannedRun&)> site_run;  // a failing run's second run, dumps armed
};

// Plans (plan_rungs), runs, judges and decides. Files go to opts.run.work_dir (the
// caller creates and removes it). `opts` as run::resolve_request (run_request.h) makes
// them: checked (check_run_options), the command found, the lookups done,
// run.user_ld_preload the program's own (--env's over the inherited one).
SessionOutcome run_session(const SessionOptions& opts, const SessionProgress& progress = {});

}  // namespace cudadiag::run

#include "run/run_session.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "coredump/arming.h"
#include "evidence/kernel_log.h"
#include "evidence/memcheck_file.h"
#include "run/coverage.h"
#include "run/fence_records.h"
#include "run/hang_stop.h"
#include "run/ring_reader.h"
#include "util/errors.h"

namespace cudadiag::run {
namespace {

using Clock = std::chrono::steady_clock;

bool portable_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool stop_requested(const SessionOptions& opts) { return opts.stop && opts.stop->load(); }

// Runs one child through the runner's scheduler, so that a stop request reaches it.
runner::ChildOutcome run_one(runner::ChildSpec spec, const SessionOptions& opts, bool& never_started) {
  runner::Pool pool(runner::PoolOptions{1, opts.stop, opts.stop_grace});
  pool.submit(std::move(spec));
  runner::ChildOutcome out;
  bool done = false;
  pool.run([&](std::size_t, const runner::ChildOutcome& o) {
    out = o;
    done = true;
  });
  never_started = !done;
  return out;
}

struct KernelLog {
  host::KernelLogCursor cursor;
  bool wanted = false;
};

KernelLog kernel_log_before(const SessionOptions& opts) {
  KernelLog k;
  k.wanted = !opts.kernel_log.empty();
  if (k.wanted) k.cursor = host::kernel_log_cursor(opts.kernel_log);
  return k;
}

coredump::DumpNames dump_names(const PlannedRun& planned, const SessionOptions& opts) {
  return coredump::DumpNames{opts.run.work_dir, planned.coredump_prefix};
}

// Everything observed of one finished run: the kernel log, the rings, memcheck's XML.
RunObservation observe(const PlannedRun& planned, const SessionOptions& opts, const runner::ChildOutcome& child,
                       const KernelLog& klog) {
  RunObservation obs;
  obs.rung = planned.rung;
  obs.repeat_index = planned.repeat_index;
  obs.command = opts.command_as_given.empty() ? opts.run.command : opts.command_as_given;
  obs.argv = planned.argv;
  obs.child = child;

  std::vector<int> pids;
  if (child.pid > 0) pids.push_back(child.pid);
  std::optional<FenceRecords> rings;
  if (is_fence(planned.rung)) {
    rings = read_fence_records(planned.ring_path);
    for (const int pid : rings->pids())
      if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
  }
  if (klog.cursor.readable && child.pid > 0) {
    const bool failed = child.ending == runner::Ending::exit_code || child.ending == runner::Ending::signal ||
                        child.ending == runner::Ending::timeout;
    obs.xid = xid_lines_of_run(host::new_xid_lines_since(klog.cursor), pids, host::to_monotonic_us(child.started),
                               host::to_monotonic_us(child.finished), failed);
  }
  // Each faulting process once (xid_match.h): the run's log is the first one's, and every
  // other one's address is placed among its own allocations.
  if (rings) {
    auto matched = match_rings(obs.xid, *rings);
    obs.interposer = std::move(matched.log);
    obs.interposer_error = std::move(matched.error);
    obs.faults = std::move(matched.faults);
  } else {
    obs.faults = match_faulting_processes(obs.xid, nullptr);
  }
  if (planned.rung == Rung::sanitizer && child.ending != runner::Ending::spawn_failed) {
    auto file = evidence::read_memcheck_file(planned.sanitizer_xml);
    obs.sanitizer = std::move(file.report);
    obs.sanitizer_error = evidence::problem_text(file, planned.sanitizer_xml);
  }
  if (!planned.coredump_prefix.empty()) {
    obs.coredump_armed = true;
    coredump::CollectOptions c;
    c.max_bytes = opts.max_dump_bytes;
    c.keep_dir = opts.keep_dumps;
    c.disassemble = opts.disassemble;
    c.no_disassembler_reason = opts.no_disassembler_reason;
    auto collected = coredump::collect_dumps(dump_names(planned, opts), c);
    obs.sites = std::move(collected.sites);
    obs.coredump_notes = std::move(collected.notes);
    // The verdict says it once, however many sites lack an instruction for it.
    if (!opts.disassemble && !obs.sites.empty())
      obs.coredump_notes.push_back(coredump::no_disassembler_note(opts.no_disassembler_reason));
  }
  return obs;
}

// What a run writes must be its own: a file left by an earlier session in the same
// directory would be read as this run's (or, for a ring, claimed already).
void remove_outputs(const PlannedRun& planned, const SessionOptions& opts) {
  std::error_code ec;
  if (!planned.coredump_prefix.empty()) {
    const auto names = dump_names(planned, opts);
    for (const auto& f : coredump::find_dumps(names)) std::filesystem::remove(f, ec);
    for (const auto& f : coredump::find_pipes(names)) std::filesystem::remove(f, ec);
  }
  if (!planned.ring_path.empty()) {
    for (const auto& f : process_ring_files(planned.ring_path)) std::filesystem::remove(f, ec);
    std::filesystem::remove(planned.ring_path, ec);
  }
  if (!planned.sanitizer_xml.empty()) std::filesystem::remove(planned.sanitizer_xml, ec);
}

template <typename T>
void release(T& v) {
  T().swap(v);
}

std::string rung_runs_text(const RungPlan& plan, std::size_t done) {
  return done == 0 ? std::string() : fmt::format(" after {} of {} runs", done, plan.runs.size());
}

// The runs of the rung that ran last before `rung`, when every one of them passed (a run
// one of the rung's own settings broke is left out: the rung's run without it counts).
// The run of the rung below to compare a failing rung with: one that passed, else one
// whose output named a CUDA error of its own (a program whose fault the native rung
// already shows, broken earlier by the rung's setting; not one that exited without a
// word, its fault proven by a dump only: the rung above failing that way is the same). None when a run below failed without a
// CUDA error itself: the failure may be the program's.
const SessionRun* comparable_run_below(const std::vector<SessionRun>& runs, Rung rung) {
  std::optional<Rung> below;
  for (const auto& r : runs)
    if (r.judgement.rung < rung) below = r.judgement.rung;
  if (!below) return nullptr;
  const SessionRun* passed = nullptr;
  const SessionRun* own_fault = nullptr;
  for (const auto& r : runs) {
    if (r.judgement.rung != *below || !r.judgement.broken_by.empty()) continue;
    if (!r.judgement.failed()) passed = &r;
    else if (r.judgement.outcome == RunOutcome::cuda_error && r.judgement.text.has(FindingKind::cuda_error)) own_fault = &r;
    else return nullptr;
  }
  return passed ? passed : own_fault;
}

// A rung that failed without a CUDA error right above a rung that passed, or that failed on
// a CUDA error of the program's own: re-runs the rung below's environment with one of the
// rung's settings at a time until one fails without a CUDA error. Marks the rung's runs it explains; the rungs above run without it.
void find_breaking_setting(SessionOutcome& out, std::size_t plan_index, const SessionOptions& opts,
                           std::vector<RunStatus>& statuses, std::chrono::milliseconds rung_deadline_cap) {
  const Rung rung = out.plan[plan_index].rung;
  if (rung != Rung::blocking && !is_fence(rung)) return;
  const SessionRun* failing = nullptr;
  for (const auto& r : out.runs) {
    if (r.judgement.rung != rung || !r.judgement.failed()) continue;
    if (!fails_without_cuda_error(r.judgement)) return;  // a fault of its own: the program's
    if (!failing) failing = &r;
  }
  const SessionRun* below = failing ? comparable_run_below(out.runs, rung) : nullptr;
  if (!below) return;
  BreakingSetting found;
  found.rung = rung;
  bool any = false;
  for (const auto& setting : settings_between(below->planned, failing->planned)) {
    if (stop_requested(opts)) return;
    PlannedRun trial = with_setting(below->planned, failing->planned, setting);
    runner::ChildSpec spec = child_spec_for(trial, opts);
    spec.deadline = bisect_deadline(below->observation.child.wall_ms, std::min(opts.timeout, rung_deadline_cap));
    spec.label = "bisect " + setting.text;
    remove_outputs(trial, opts);
    bool never_started = false;
    const auto child = run_one(std::move(spec), opts, never_started);
    ++found.bisect_runs;
    if (never_started) return;
    const RunJudgement j = judge_run(observe(trial, opts, child, KernelLog{}));
    spdlog::debug("bisect {}: {}: {}", setting.text, to_string(j.outcome), j.reason);
    if (fails_without_cuda_error(j)) {
      found.setting = setting;
      any = true;
      break;
    }
  }
  if (!any) return;
  found.error_line = last_output_line(failing->observation);
  found.text = breaking_text(found.setting, found.error_line);
  // The rungs above do not fail on it again: they run without it, or not at all when the
  // setting is the interposer itself.
  const PlannedRun below_planned = below->planned;  // `below` points into out.runs
  for (std::size_t p = plan_index + 1; p < out.plan.size(); ++p) {
    auto& plan = out.plan[p];
    const bool needs_it = is_fence(plan.rung) && found.setting.interposer;
    if (needs_it && plan.skip_reason.empty()) {
      plan.skip_reason = found.text;
      plan.runs.clear();
      continue;
    }
    bool changed = false;
    for (auto& run : plan.runs) changed = drop_setting(run, below_planned, found.setting) || changed;
    if (changed) found.text += fmt::format("; the {} rung runs without it", to_string(plan.rung));
  }
  // The rung itself still checks the program: once more, without it (run_session runs it
  // once the rung's runs are done).
  found.rerun = rerun_without(failing->planned, below_planned, found.setting);
  if (found.rerun) {
    found.text += fmt::format("; the {} rung runs once more without it", to_string(rung));
    if (const std::string cost = kept_on_text(found.setting); !cost.empty()) found.text += "; " + cost;
  }
  for (std::size_t i = 0; i < out.runs.size(); ++i) {
    auto& r = out.runs[i];
    if (r.judgement.rung != rung || !r.judgement.failed()) continue;
    r.judgement.broken_by = found.text;
    statuses[i].failed = false;
  }
  out.breaking.push_back(std::move(found));
}

// The deadline of a run of `rung`, learned from the native runs so far; `rung_timeout`:
// the session's own for it.
RungDeadline deadline_for(const SessionOutcome& out, Rung rung, std::chrono::milliseconds rung_timeout,
                          const SessionOptions& opts) {
  std::vector<RunJudgement> judged;
  std::vector<double> wall;
  for (const auto& r : out.runs) {
    judged.push_back(r.judgement);
    wall.push_back(r.observation.child.wall_ms);
  }
  return rung_deadline(rung, native_wall_ms(judged, wall), rung_timeout, opts.sanitizer_timeout_factor,
                       opts.hung_floor);
}

}  // namespace

void drop_unshown_observation(std::vector<SessionRun>& runs) {
  if (runs.size() < 2) return;
  const std::size_t latest = runs.size() - 1;
  const Rung rung = runs[latest].judgement.rung;
  std::size_t first = latest;  // the rung's runs are contiguous
  while (first > 0 && runs[first - 1].judgement.rung == rung) --first;
  if (first == latest) return;
  std::optional<std::size_t> first_failing;
  for (std::size_t i = first; i <= latest && !first_failing; ++i)
    if (runs[i].judgement.failed()) first_failing = i;
  SessionRun& previous = runs[latest - 1];
  if (previous.observation_dropped || first_failing == latest - 1) return;
  RunObservation& obs = previous.observation;
  release(obs.child.out.head);
  release(obs.child.out.tail);
  release(obs.child.err.head);
  release(obs.child.err.tail);
  release(obs.child.result);
  release(obs.xid);
  release(obs.faults);
  obs.interposer.reset();
  obs.sanitizer.reset();
  previous.observation_dropped = true;
}

std::map<std::string, std::string> parse_env_assignments(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (eq == std::string::npos || !portable_name(name))
      throw UsageError("--env: expected NAME=VALUE (NAME of letters, digits and '_'), got '" + item + "'");
    out[name] = item.substr(eq + 1);
  }
  return out;
}

runner::ChildSpec child_spec_for(const PlannedRun& run, const SessionOptions& opts) {
  runner::ChildSpec spec;
  spec.argv = run.argv;
  spec.env_set = opts.env;
  for (const auto& name : run.env_unset) spec.env_set.erase(name);
  for (const auto& [name, value] : run.env_set) spec.env_set[name] = value;
  spec.env_unset = run.env_unset;
  spec.deadline = run.rung == Rung::sanitizer ? opts.timeout * std::max(1, opts.sanitizer_timeout_factor) : opts.timeout;
  spec.grace = opts.grace;
  spec.capture_limit = opts.capture_limit;
  spec.result_pipe = false;
  spec.label = fmt::format("{} #{}", to_string(run.rung), run.repeat_index);
  if (!run.coredump_prefix.empty() && opts.dump_wait.count() > 0) {
    // A hang: the driver's pipe asks every CUDA process of the run for a dump (the warps'
    // PCs), awaited until the dumps stop growing, then the run is ended as usual.
    const coredump::DumpNames names = dump_names(run, opts);
    auto watcher = std::make_shared<std::optional<coredump::DumpWatcher>>();
    spec.at_deadline = [names, watcher](pid_t) {
      const auto triggered = coredump::trigger_pipes(coredump::find_pipes(names));
      spdlog::debug("deadline: {} dump pipe(s) written", triggered.size());
      if (!triggered.empty()) watcher->emplace(names, triggered.size());
    };
    spec.deadline_wait = [watcher] { return watcher->has_value() && !(*watcher)->complete(); };
    spec.deadline_hook_budget = opts.dump_wait;
  }
  return spec;
}

std::vector<host::XidEvent> xid_lines_of_run(const std::vector<host::XidEvent>& events, const std::vector<int>& pids,
                                             std::uint64_t start_us, std::uint64_t end_us, bool failed) {
  if (pids.empty()) return {};
  return evidence::xid_lines_of_child(events, pids, evidence::ChildWindow{pids.front(), start_us, end_us}, {}, failed);
}

// The failing run once more with GPU core dumps armed, under the same deadline: its
// sites become the run's.
void site_run(SessionRun& run, const SessionOptions& opts, const SessionProgress& progress,
              std::chrono::milliseconds deadline) {
  const PlannedRun armed = armed_for_site(run.planned, opts.run);
  remove_outputs(armed, opts);
  if (progress.site_run) progress.site_run(armed);
  const KernelLog klog = kernel_log_before(opts);
  bool never_started = false;
  runner::ChildSpec spec = child_spec_for(armed, opts);
  spec.deadline = deadline;
  const auto child = run_one(std::move(spec), opts, never_started);
  if (never_started) return;
  const RunObservation obs = observe(armed, opts, child, klog);
  take_sites_of_site_run(run.judgement, run.observation, obs, judge_run(obs));
}

namespace {

// Runs one planned run under the deadline learned from the native run
// (breaking_setting.h: rung_deadline) and judges it into out.runs; false when it never
// started or a stop request ended it (kept in out.interrupted, not judged).
bool run_and_judge(SessionOutcome& out, const PlannedRun& planned, const SessionOptions& opts,
                   const SessionProgress& progress, std::vector<RunStatus>& statuses, RungDeadline& deadline) {
  remove_outputs(planned, opts);
  if (progress.started) progress.started(planned);
  const KernelLog klog = kernel_log_before(opts);
  if (klog.wanted && !klog.cursor.readable && out.kernel_log_reason.empty())
    out.kernel_log_reason = klog.cursor.path + ": " + klog.cursor.reason;
  out.kernel_log_read = out.kernel_log_read || klog.cursor.readable;
  runner::ChildSpec spec = child_spec_for(planned, opts);
  deadline = deadline_for(out, planned.rung, spec.deadline, opts);
  spec.deadline = deadline.deadline;
  bool never_started = false;
  const auto child = run_one(std::move(spec), opts, never_started);
  if (never_started || (stop_requested(opts) && child.ending == runner::Ending::timeout)) {
    if (!never_started) out.interrupted.push_back(observe(planned, opts, child, klog));
    return false;
  }
  SessionRun run{planned, observe(planned, opts, child, klog), {}};
  run.judgement = judge_run(run.observation);
  if (deadline.learned && child.ending == runner::Ending::timeout && run.judgement.outcome == RunOutcome::timeout)
    run.judgement.reason += "; ended as hung at the deadline learned from the native run (" + deadline.text + ")";
  spdlog::debug("run {} #{}: {}: {}", to_string(planned.rung), planned.repeat_index, to_string(run.judgement.outcome),
                run.judgement.reason);
  statuses.push_back(status_of(run.judgement));
  out.runs.push_back(std::move(run));
  return true;
}

// A rung whose own setting broke the program runs once more without it (found by
// find_breaking_setting), so that the rung still checks the program. False when a stop
// request ended it.
bool rerun_without_breaking_setting(SessionOutcome& out, Rung rung, const SessionOptions& opts,
                                    const SessionProgress& progress, std::vector<RunStatus>& statuses,
                                    std::set<Rung>& sited) {
  for (auto& b : out.breaking) {
    if (b.rung != rung || !b.rerun) continue;
    PlannedRun again = std::move(*b.rerun);
    b.rerun.reset();  // once
    again.repeat_index = static_cast<int>(
        std::count_if(out.runs.begin(), out.runs.end(), [&](const SessionRun& r) { return r.judgement.rung == rung; }));
    RungDeadline deadline;
    if (!run_and_judge(out, again, opts, progress, statuses, deadline)) return false;
    SessionRun& last = out.runs.back();
    if (wants_site_run(opts.run, rung) && wants_site(last.judgement) && sited.insert(rung).second &&
        !stop_requested(opts))
      site_run(last, opts, progress, deadline.deadline);
    if (progress.judged) progress.judged(out.runs.back());
    drop_unshown_observation(out.runs);
  }
  return true;
}

}  // namespace

SessionOutcome run_session(const SessionOptions& opts, const SessionProgress& progress) {
  const auto t0 = Clock::now();

  SessionOutcome out;
  out.plan = plan_rungs(opts.run);
  std::vector<RunStatus> statuses;
  std::string ladder_stopped;  // why the rungs after this point do not run
  std::string hang_stop;       // a run's dump named a hang: the rungs above do not run (hang_stop.h)
  std::set<Rung> sited;        // rungs whose first failing run had its site run
  std::set<Rung> bisected;     // rungs whose breaking setting was looked for

  for (std::size_t plan_index = 0; plan_index < out.plan.size(); ++plan_index) {
    const auto& plan = out.plan[plan_index];
    // A rung that cannot run says why (the interposer or compute-sanitizer is missing),
    // except a sanitizer rung that --sanitize auto would not have run anyway.
    if (!plan.skip_reason.empty() && !plan.conditional) {
      out.skipped.push_back({plan.rung, plan.skip_reason});
      continue;
    }
    if (ladder_stopped.empty() && stop_requested(opts)) ladder_stopped = "interrupted";
    if (!ladder_stopped.empty()) {
      out.skipped.push_back({plan.rung, ladder_stopped, ladder_stopped == hang_stop});
      continue;
    }
    MemcheckPlan memcheck;
    if (plan.rung == Rung::sanitizer) {
      std::vector<RunJudgement> earlier;
      for (const auto& r : out.runs) earlier.push_back(r.judgement);
      memcheck = plan_memcheck(opts.run.sanitize, earlier);
    }
    if (plan.conditional && !memcheck.run) {
      out.skipped.push_back({plan.rung, memcheck.reason});
      continue;
    }
    if (!plan.skip_reason.empty()) {
      out.skipped.push_back({plan.rung, plan.skip_reason});
      continue;
    }
    std::size_t done = 0;
    if (plan.rung == Rung::sanitizer && memcheck.run) out.memcheck_reason = memcheck.reason;
    if (!memcheck.kernel.empty()) out.memcheck_kernel = memcheck.kernel;
    for (const auto& planned_in : plan.runs) {
      PlannedRun planned = planned_in;
      limit_memcheck_to_kernel(planned, memcheck.kernel, opts.run.command.size());
      if (stop_requested(opts)) {
        ladder_stopped = "interrupted";
        out.skipped.push_back({plan.rung, "interrupted" + rung_runs_text(plan, done)});
        break;
      }
      RungDeadline deadline;
      if (!run_and_judge(out, planned, opts, progress, statuses, deadline)) {
        ladder_stopped = "interrupted";
        out.skipped.push_back({plan.rung, "interrupted" + rung_runs_text(plan, done)});
        break;
      }
      // A failure without a CUDA error: the search for a breaking setting at once, so that
      // the rung's other repeats are not waited on when one is found.
      if (fails_without_cuda_error(out.runs.back().judgement) && !stop_requested(opts) &&
          bisected.insert(plan.rung).second)
        find_breaking_setting(out, plan_index, opts, statuses, deadline.deadline);
      SessionRun& last = out.runs.back();
      if (last.judgement.broken_by.empty() && wants_site_run(opts.run, planned.rung) && wants_site(last.judgement) &&
          sited.insert(planned.rung).second && !stop_requested(opts))
        site_run(last, opts, progress, deadline.deadline);
      if (hang_stop.empty()) hang_stop = hang_stop_reason(out.runs.back().judgement, opts.run);
      if (progress.judged) progress.judged(out.runs.back());
      drop_unshown_observation(out.runs);
      ++done;
      const bool rung_complete = done == plan.runs.size();
      if (!out.runs.back().judgement.broken_by.empty() && !rung_complete) {
        // A setting known to break the program: its other repeats would break the same way.
        out.skipped.push_back({plan.rung, fmt::format("{} more run(s) not run: {}", plan.runs.size() - done,
                                                      out.runs.back().judgement.broken_by)});
        break;
      }
      if (rung_complete && bisected.insert(plan.rung).second)
        find_breaking_setting(out, plan_index, opts, statuses, deadline.deadline);
      if (!ladder_continues(opts.run.stop_at_first, statuses, rung_complete)) {
        ladder_stopped = !statuses.back().started
                             ? "the command did not start"
                             : fmt::format("--stop-at-first: the {} rung failed", to_string(plan.rung));
        if (!rung_complete) out.skipped.push_back({plan.rung, ladder_stopped + rung_runs_text(plan, done)});
        break;
      }
      if (rung_complete && !hang_stop.empty()) ladder_stopped = hang_stop;
    }
    if (ladder_stopped.empty() && !stop_requested(opts) &&
        !rerun_without_breaking_setting(out, plan.rung, opts, progress, statuses, sited))
      ladder_stopped = "interrupted";
  }
  out.stopped = stop_requested(opts) || !out.interrupted.empty();

  std::vector<RunJudgement> judgements;
  for (const auto& r : out.runs) judgements.push_back(r.judgement);
  out.verdict = decide_run_verdict(judgements, out.skipped);
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return out;
}

}  // namespace cudadiag::run

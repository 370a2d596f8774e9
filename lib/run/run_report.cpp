#include "run/run_report.h"

#include "run/run_request.h"

#include <map>

#include <fmt/format.h>

#include "coredump/arming.h"
#include "evidence/interruption.h"
#include "evidence/session_report.h"
#include "run/to_result.h"
#include "repeat/series.h"
#include "report/vocabulary.h"
#include "util/utf8.h"

namespace cudadiag::run {
namespace {

using report::json;

double seconds(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; }

// Each run's one line for the ladder summary: "fence #1: cuda_error (0.5 s)".
std::string ladder_line(const SessionRun& r) {
  return fmt::format("{}{}: {} ({:.1f} s)", to_string(r.judgement.rung),
                     r.planned.repeat_index > 0 ? fmt::format(" #{}", r.planned.repeat_index) : std::string(),
                     to_string(r.judgement.outcome), r.observation.child.wall_ms / 1000.0);
}

json plan_json(const SessionOptions& opts, const SessionOutcome& out) {
  json rungs = json::array();
  for (const auto& p : out.plan) rungs.push_back(to_string(p.rung));
  json env_names = json::array();  // values may be secrets: names only
  for (const auto& [name, value] : opts.env) env_names.push_back(name);
  return json{{"rungs", rungs},
              {"repeat", opts.run.repeat},
              {"sanitize", to_string(opts.run.sanitize)},
              {"stop_at_first", opts.run.stop_at_first},
              {"timeout_s", seconds(opts.timeout)},
              {"sanitizer_timeout_s", seconds(opts.timeout) * std::max(1, opts.sanitizer_timeout_factor)},
              {"env", env_names}};
}

json rungs_json(const SessionOutcome& out) {
  json rungs = json::array();
  const auto stats = rung_stats([&] {
    std::vector<RunJudgement> js;
    for (const auto& r : out.runs) js.push_back(r.judgement);
    return js;
  }());
  for (const auto& p : out.plan) {
    json j{{"rung", to_string(p.rung)}, {"planned_runs", p.runs.size()}};
    double wall_ms = 0.0;
    for (const auto& r : out.runs)
      if (r.judgement.rung == p.rung) wall_ms += r.observation.child.wall_ms;
    const RungStats* s = nullptr;
    for (const auto& st : stats)
      if (st.rung == p.rung) s = &st;
    j["runs"] = s ? s->runs : 0;
    j["failures"] = s ? s->failures : 0;
    if (s) {
      j["failure_rate"] = static_cast<double>(s->failures) / s->runs;
      j["ci95_low"] = s->ci.low;
      j["ci95_high"] = s->ci.high;
      j["outcomes"] = s->outcomes;
    }
    j["wall_ms"] = wall_ms;
    std::string skipped;
    for (const auto& sk : out.skipped)
      if (sk.rung == p.rung) skipped = sk.reason;
    j["not_run"] = skipped.empty() ? json(nullptr) : json(skipped);
    rungs.push_back(std::move(j));
  }
  return rungs;
}

// Where the planned fenced runs put their guards: "back", "front" or "both".
std::string fence_sides(const SessionOutcome& out) {
  bool back = false, front = false;
  for (const auto& p : out.plan)
    for (const auto& r : p.runs) {
      back = back || r.fence_side == FenceSide::back;
      front = front || r.fence_side == FenceSide::front;
    }
  return back && front ? "both" : front ? "front" : "back";
}

json fence_json(const SessionOptions& opts, const SessionOutcome& out) {
  const auto& run = opts.run;
  json f{{"interposer", run.interposer_path.empty() ? json(nullptr) : json(run.interposer_path)},
         {"align", run.fence_align},
         {"side", fence_sides(out)},
         {"quarantine_mb", run.quarantine_mb ? json(*run.quarantine_mb) : json(nullptr)},
         {"recycle_mb", run.recycle_mb}};
  if (run.interposer_path.empty()) f["missing_reason"] = run.interposer_missing_reason;
  // What the fence saw in its last run (every fenced run's own is in its result).
  for (auto it = out.runs.rbegin(); it != out.runs.rend(); ++it) {
    const auto& j = it->judgement;
    if (!is_fence(j.rung) || !j.fence) continue;
    f["effective"] = j.fence->effective;
    f["cuda_unused"] = j.fence->cuda_unused;
    f["reason"] = j.fence->reason;
    if (const auto& log = it->observation.interposer) {
      const auto& s = log->summary;
      f["allocations"] = s.allocations;
      f["fenced"] = s.fenced;
      f["launches"] = s.launches;
    }
    break;
  }
  return f;
}

json sanitizer_json(const SessionOptions& opts, const RunFacts& facts) {
  json s = evidence::sanitizer_json(facts.sanitizer.found, facts.sanitizer.path, facts.sanitizer.reason);
  s["padding_bytes"] = opts.run.sanitizer_padding;
  return s;
}

json caching_json() {
  json rows = json::array();
  for (const auto& c : caching_off_settings())
    rows.push_back(json{{"framework", c.framework}, {"variable", c.variable}, {"value", c.value},
                        {"verified", c.verified == Verification::device ? "device" : "documented"}});
  return rows;
}

// How GPU core dumps were armed for the runs (coredump/arming.h), or why not.
json coredump_json(const SessionOptions& opts) {
  const auto& run = opts.run;
  const bool armed = run.coredump && run.user_coredump_vars.empty();
  json c{{"armed", armed}};
  if (armed) {
    c["rungs"] = "every rung but the sanitizer's";
    c["generation_flags"] = coredump::kGenerationFlags;
    c["skip_abort"] = coredump::kSkipAbortReason;
    c["hang_trigger"] = fmt::format("at a deadline, {} bytes into the driver's pipe, then up to {:.0f} s for the dump",
                                    coredump::kTriggerBytes, seconds(opts.dump_wait));
    c["max_bytes"] = opts.max_dump_bytes;
    c["kept_in"] = opts.keep_dumps.empty() ? json(nullptr) : json(opts.keep_dumps);
  } else if (!run.user_coredump_vars.empty()) {
    c["reason"] = "the program's environment sets the driver's core-dump variables; they are kept as they are and "
                  "cudadiag reads no dump of its own";
    c["user_variables"] = run.user_coredump_vars;
  } else {
    c["reason"] = "not armed (--no-coredump)";
  }
  return c;
}

json run_section(const SessionOptions& opts, const SessionOutcome& out) {
  const auto& v = out.verdict;
  json ladder = json::array();
  for (const auto& r : out.runs) ladder.push_back(ladder_line(r));
  for (const auto& s : out.skipped) ladder.push_back(std::string(to_string(s.rung)) + ": not run (" + s.reason + ")");
  json section{{"command", opts.command_as_given.empty() ? opts.run.command : opts.command_as_given},
               {"executable", opts.run.command.front()},
               {"verdict", to_string(v.kind)},
               {"first_exposed_by", v.first_exposed_by ? json(to_string(*v.first_exposed_by)) : json(nullptr)},
               {"evidence", v.evidence},
               {"ladder", ladder},
               {"plan", plan_json(opts, out)},
               {"rungs", rungs_json(out)}};
  section["evidence_result"] = v.evidence_run ? json(*v.evidence_run) : json(nullptr);
  section["fence"] = fence_json(opts, out);
  section["caching"] = caching_json();
  section["kernel_log"] = json{{"read", out.kernel_log_read}, {"reason", out.kernel_log_reason}};
  section["coredump"] = coredump_json(opts);
  section["memcheck"] = json{{"why", out.memcheck_reason.empty() ? json(nullptr) : json(out.memcheck_reason)},
                             {"kernel_filter", out.memcheck_kernel.empty() ? json(nullptr) : json(out.memcheck_kernel)}};
  section["interrupted_runs"] = out.interrupted.size();
  section["wall_ms"] = out.wall_ms;
  return section;
}

// One result per rung: the run that shows the most (its first failing repeat, else its
// last), with the rung's repeat statistics, so that `compare` tests a rung's failure
// rate across hosts as it does a repro case's; every repeat is listed in details.runs.
// A run one of the rung's own settings broke checked nothing: not counted as a failure
// (skipped in the statistics, its breaking setting named), as the verdict does not count
// it; the rung's run without that setting is the one shown.
report::Result rung_result(const std::vector<const SessionRun*>& runs) {
  const auto counted = [](const SessionRun* run) { return run->judgement.broken_by.empty(); };
  const SessionRun* shown = runs.back();
  for (const auto* run : runs)
    if (run->judgement.failed() && counted(run)) {
      shown = run;
      break;
    }
  report::Result r = to_result(shown->observation, shown->judgement);
  r.params.erase("repeat");
  std::map<std::string, int> histogram;
  int failures = 0;
  report::Value::List each;
  for (const auto* run : runs) {
    const report::Result one = to_result(run->observation, run->judgement);
    const std::string outcome(report::to_string(counted(run) ? one.outcome : report::Outcome::skipped));
    ++histogram[outcome];
    if (run->judgement.failed() && counted(run)) ++failures;
    report::Fields line{{"repeat", run->judgement.repeat_index},
                        {"outcome", outcome},
                        {"run_outcome", to_string(run->judgement.outcome)},
                        {"duration_ms", run->observation.child.wall_ms}};
    if (!counted(run)) line.set("broken_by", to_valid_utf8(run->judgement.broken_by));
    each.push_back(std::move(line));
  }
  const auto s = repeat::repeat_stats(histogram, failures);
  r.repeats = s;
  r.details.set("shown_repeat", shown->judgement.repeat_index);
  r.details.set("runs", std::move(each));
  return r;
}

// A run the stop request cut short: recorded, never judged.
report::Result interrupted_result(const RunObservation& obs) {
  auto r = to_result(obs, judge_run(obs));
  r.outcome = report::Outcome::skipped;
  r.reason = fmt::format("interrupted: ended by the stop request after {:.1f} s", obs.child.wall_ms / 1000.0);
  r.error.reset();
  r.details.set("run_outcome", "interrupted");
  return r;
}

// The inherited environment with the allowlisted --env values over it.
report::Environment environment_of(const SessionOptions& opts, report::Environment env) {
  for (const auto& [name, value] : opts.env)
    if (report::is_allowlisted_env(name)) env.set(name, to_valid_utf8(value));
  return env;
}

}  // namespace

report::Report run_report(report::Report r, const SessionOptions& opts, const SessionOutcome& out,
                          const RunFacts& facts) {
  r.environment = environment_of(opts, std::move(r.environment));

  std::string no_gpu;
  if (out.verdict.cuda_could_not_start) no_gpu = "CUDA could not start in the program: " + out.verdict.evidence;
  else no_gpu = facts.no_gpu_reason;
  r.gpu = {no_gpu.empty(), to_valid_utf8(no_gpu)};

  std::vector<std::pair<Rung, std::vector<const SessionRun*>>> by_rung;  // in ladder order
  for (const auto& run : out.runs) {
    const Rung rung = run.judgement.rung;
    if (by_rung.empty() || by_rung.back().first != rung) by_rung.push_back({rung, {}});
    by_rung.back().second.push_back(&run);
  }
  for (const auto& [rung, runs] : by_rung) r.results.push_back(rung_result(runs));
  for (const auto& obs : out.interrupted) r.results.push_back(interrupted_result(obs));
  json run = run_section(opts, out);
  run["sanitizer"] = sanitizer_json(opts, facts);
  r.extra.set("run", report::value_from_json(run));
  r.verdict = to_report_verdict(out.verdict);
  evidence::record_interruption(r, out.stopped, "interrupted: the verdict covers the runs that finished",
                                evidence::ReasonAt::front);
  report::finish_report(r);
  return r;
}

report::Report run_report(report::Report r, const Request& request, const SessionOutcome& outcome) {
  return run_report(std::move(r), request.session, outcome, request.facts);
}

}  // namespace cudadiag::run

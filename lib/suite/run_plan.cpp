#include "suite/run_plan.h"

#include <unistd.h>

#include <algorithm>
#include <memory>

#include "host/xid.h"
#include "profiles/sanitizer_tool.h"
#include "suite/executor.h"
#include "suite/post_steps.h"
#include "util/log.h"

namespace cudadiag::suite {
namespace {

using Clock = std::chrono::steady_clock;
using report::Outcome;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

report::Result host_result(const Suite& s, const PlannedCase& run) {
  const SuiteCase& sc = s.cases[run.suite_case];
  report::Result r;
  const auto h0 = Clock::now();
  try {
    r = cases::family(sc.def.family).host_eval(sc.def);
  } catch (const std::exception& e) {
    r.outcome = Outcome::crashed;
    r.reason = std::string("host evaluation failed: ") + e.what();
  }
  r.case_id = sc.def.id;
  r.kernel = sc.def.family;
  r.params = report::fields_from_json(sc.def.params);
  r.profile = run.profile.name;
  r.device = report::Device::host_only();
  r.allocator.reset();
  if (r.duration_ms == 0.0) r.duration_ms = ms_since(h0);
  return r;
}

std::shared_ptr<const ChildSettings> settings_for(const Batch& b, const Plan& plan, const SuiteRunOptions& opts) {
  const PlannedCase& first = plan.runs[b.runs.front()];
  auto s = std::make_shared<ChildSettings>();
  s->env_set = child_env(first.profile, b.device_slot, opts.devices);
  s->deadline = b.deadline_ms > 0 ? std::chrono::milliseconds(b.deadline_ms) : opts.default_deadline;
  s->grace = b.grace_ms > 0 ? std::chrono::milliseconds(b.grace_ms) : opts.grace;
  s->profile = first.profile.name;
  if (b.device_slot >= 0) {
    const auto& d = opts.devices[static_cast<size_t>(b.device_slot)];
    s->device = report::Device::gpu(d.uuid);
    s->device_index = d.index;
    s->lane = b.device_slot;
  } else {
    s->device = report::Device::host_only();
  }
  if (b.sanitizer) {
    const std::string tool = opts.sanitizer_path, dir = opts.scratch_dir;
    s->wrap = [tool, dir](size_t child) { return sanitizer_wrap(tool, dir + "/sanitizer-" + std::to_string(child) + ".xml"); };
  }
  return s;
}

// Where the time went (setup, host cases, children, the longest children), at debug level.
void log_phases(const Plan& plan, const SuiteOutcome& outcome, double setup_ms) {
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

}  // namespace

Wrap sanitizer_wrap(const std::string& tool, const std::string& xml) {
  return Wrap{profiles::sanitizer_argv(tool, xml, profiles::kSanitizerPaddingBytes), xml};
}

std::map<std::string, std::string> child_env(const profiles::Profile& profile, int slot,
                                             const std::vector<DeviceTarget>& devices) {
  std::map<std::string, std::string> env = profile.env_set;
  if (slot >= 0 && static_cast<size_t>(slot) < devices.size()) {
    const auto& d = devices[static_cast<size_t>(slot)];
    if (!d.device_order.empty()) env["CUDA_DEVICE_ORDER"] = d.device_order;
    env["CUDA_VISIBLE_DEVICES"] =
        !d.visible_devices.empty() ? d.visible_devices : d.uuid.empty() ? std::to_string(d.index) : d.uuid;
  }
  return env;
}

SuiteOutcome run_plan(const Suite& s, const Plan& plan, const SuiteRunOptions& opts) {
  const auto t0 = Clock::now();
  SuiteOutcome out;
  std::vector<std::optional<report::Result>> results(plan.runs.size());
  auto stopped = [&] { return opts.stop && opts.stop->load(); };
  auto deliver = [&](size_t run, report::Result r) {
    if (opts.on_result) opts.on_result(r);
    results[run] = std::move(r);
  };

  // Host-only runs and runs that cannot happen are decided here, before any child.
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const PlannedCase& run = plan.runs[i];
    if (run.venue == Venue::host && !stopped()) {
      report::Result r = host_result(s, run);
      judge_result(r, run.expectation, run.profile);
      deliver(i, std::move(r));
    } else if (run.venue == Venue::skipped) {
      ChildSettings tags;
      tags.profile = run.profile.name;
      report::Result r = make_result(run.spec, tags);
      r.outcome = Outcome::skipped;
      r.reason = run.skip_reason;
      judge_result(r, run.expectation, run.profile);
      deliver(i, std::move(r));
    }
  }
  out.host_ms = ms_since(t0);

  // Kernel log: a cursor before the first child, read once after the last.
  host::KernelLogCursor cursor;
  if (opts.read_kernel_log && !plan.batches.empty()) cursor = host::kernel_log_cursor();

  ExecutorOptions eopts{opts.self_exe, opts.jobs, opts.stop, opts.stop_grace};
  eopts.coredump = opts.coredump;
  eopts.lanes = opts.devices.size();
  Executor ex(std::move(eopts));
  for (const Batch& b : plan.batches) {
    std::vector<CaseSpec> specs;
    for (size_t i : b.runs) specs.push_back(plan.runs[i].spec);
    ex.submit(std::move(specs), settings_for(b, plan, opts));
  }
  const auto& children = ex.children();
  // Post-steps, as each result is final: the sanitizer's XML, CUDA that could not start,
  // the judgement against the run's planned expectation.
  ex.run([&](ExecutedCase& c) {
    const PlannedCase& run = plan.runs[static_cast<size_t>(c.spec.index)];
    if (c.child && !children[*c.child].artifact.empty() && c.result.outcome != Outcome::skipped)
      attach_sanitizer(c.result, children[*c.child].artifact);
    if (const auto why = skip_if_cuda_unusable(c.result); !why.empty()) out.cuda_unusable = why;
    judge_result(c.result, run.expectation, run.profile);
    if (opts.on_result) opts.on_result(c.result);
  });
  // Cases that missed their expectation with a fault run once more, armed, for the site.
  ex.run_site_runs([](const ExecutedCase& c) { return wants_site_run(c.result, SitePolicy::missed_expectation); });

  // Kernel-log lines, once every child has ended.
  std::vector<ExecutedCase> executed = ex.cases();
  if (cursor.readable) attach_kernel_log(executed, children, host::new_xid_lines_since(cursor));
  const std::uint64_t t0_us = host::monotonic_now_us() - static_cast<std::uint64_t>(ms_since(t0) * 1000.0);
  for (const auto& rec : children) {
    if (!rec.artifact.empty()) ::unlink(rec.artifact.c_str());
    if (rec.pid <= 0) continue;
    ++out.children;
    out.timings.push_back(ChildTiming{rec.batch, (static_cast<double>(rec.start_us) - static_cast<double>(t0_us)) / 1000.0,
                                      static_cast<double>(rec.end_us - rec.start_us) / 1000.0});
  }
  for (auto& c : executed) results[static_cast<size_t>(c.spec.index)] = std::move(c.result);

  // Runs never decided (a stop before the host part reached them) are interrupted too.
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    if (results[i]) continue;
    ChildSettings tags;
    tags.profile = plan.runs[i].profile.name;
    report::Result r = make_result(plan.runs[i].spec, tags);
    r.outcome = Outcome::skipped;
    r.reason = "interrupted";
    judge_result(r, plan.runs[i].expectation, plan.runs[i].profile);
    results[i] = std::move(r);
  }
  out.interrupted = ex.interrupted() || stopped();
  for (auto& r : results) out.results.push_back(std::move(*r));
  out.wall_ms = ms_since(t0);
  log_phases(plan, out, opts.setup_ms);
  return out;
}

}  // namespace cudadiag::suite

#include "suite/single_case.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <set>
#include <stdexcept>

#include "cases/bisect.h"
#include "evidence/cuda_start.h"
#include "evidence/session_report.h"
#include "host/host_facts.h"
#include "suite/device_selection.h"
#include "profiles/profile.h"
#include "suite/executor.h"
#include "suite/site_runs.h"

namespace cudadiag::suite {
namespace {

using report::Outcome;

ChildSettings settings_for(const CaseSpec& spec, const SingleCaseOptions& opts) {
  ChildSettings s;
  if (opts.blocking) s.env_set["CUDA_LAUNCH_BLOCKING"] = "1";
  s.env_set.merge(job_binding_env());  // a Slurm job's GPUs
  if (opts.deadline_ms > 0) s.deadline = std::chrono::milliseconds(opts.deadline_ms);
  s.profile = profiles::profile_name_for_run(spec.allocator, opts.blocking, opts.fence_side);
  return s;
}

bool is_memory_fault(const report::Result& r) {
  return r.outcome == Outcome::cuda_error && r.error && r.error->error_class == taxonomy::ErrorClass::memory_fault;
}

// Buffer names in allocation order, once each.
std::vector<std::string> buffer_names(const report::Result& r) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& b : r.buffers)
    if (seen.insert(b.name).second) names.push_back(b.name);
  return names;
}

void bisect_fault(report::Result& r, const CaseSpec& spec, const ChildSettings& settings,
                  const std::string& self_exe, const std::atomic<bool>* stop) {
  const auto names = buffer_names(r);
  spdlog::info("{} faulted under {}: bisecting over {} buffers", spec.case_id, profiles::to_string(spec.allocator),
               names.size());
  const cases::FaultProbe probe = [&](const std::vector<std::string>& fenced, profiles::Allocator allocator) {
    CaseSpec s = spec;
    s.allocator = allocator;
    s.repeat = 1;
    s.fence_buffers = fenced;
    const auto results = execute({s}, settings, self_exe, stop);
    return !results.empty() && is_memory_fault(results.front());
  };
  cases::Bisection fb = cases::bisect(names, spec.allocator, probe);
  if (fb.found)
    for (const auto& b : r.buffers)
      if (b.name == fb.name) fb.bytes = b.bytes;
  r.faulting_buffer = cases::reported_buffer(fb);
  r.details.set("bisection", cases::bisection_fields(fb));
  if (fb.found) spdlog::info("faulting buffer: {} ({})", fb.name, choice_name(report::kBufferDirections, fb.direction));
  else spdlog::info("bisection found no single buffer: {}", fb.note);
}

std::string what_happened(const report::Result& r) {
  std::string what(report::to_string(r.outcome));
  if (r.error) what += " " + r.error->name + " (" + std::to_string(r.error->code) + ") at " + r.error->surfaced_at;
  else if (!r.reason.empty()) what += ": " + r.reason;
  return what;
}

// The GPU part did not run: the host could not start CUDA (the case skipped), or the
// child's CUDA did not start.
bool gpu_did_not_run(const report::Report& rep) {
  return !rep.gpu.ran || evidence::cuda_could_not_start(rep.results.front());
}

report::Verdict no_gpu_verdict(const report::Report& rep) {
  return report::Verdict{report::VerdictStatus::no_gpu,
                         {"the GPU part could not run: " + rep.gpu.reason.value_or("")}};
}

}  // namespace

report::Report run_single_case(const CaseSpec& spec, const SingleCaseOptions& opts) {
  const ChildSettings settings = settings_for(spec, opts);
  const auto facts = host::gather_host_facts(opts.self_exe);
  report::Report rep = evidence::start_session_report({opts.argv, opts.command, opts.envp, &facts});

  // A host where CUDA cannot start: the case is skipped with the reason every command gives.
  if (const std::string why = evidence::gpu_unavailable(facts); !why.empty()) {
    report::Result r = make_result(spec, settings);
    r.outcome = Outcome::skipped;
    r.reason = why;
    r.expected = opts.expected.text();
    rep.gpu = {false, why};
    rep.results.push_back(std::move(r));
    report::finish_report(rep);
    return rep;
  }

  auto results = execute({spec}, settings, opts.self_exe, opts.stop,
                         opts.coredump ? SitePolicy::every_failure : SitePolicy::none);
  if (results.empty()) throw std::runtime_error("the executor returned no result for " + spec.case_id);
  report::Result r = std::move(results.front());
  if (evidence::cuda_could_not_start(r)) {
    rep.gpu = {false, r.error->name + " (" + std::to_string(r.error->code) + "): " + r.error->message};
    r.expected = opts.expected.text();
    r.expectation_met.reset();
  } else {
    rep.gpu = {true, std::nullopt};
    cases::judge(r, opts.expected);
    if (opts.bisect && profiles::is_fence(spec.allocator) && !spec.fence_buffers && is_memory_fault(r))
      bisect_fault(r, spec, settings, opts.self_exe, opts.stop);
  }
  rep.results.push_back(std::move(r));
  report::finish_report(rep);
  return rep;
}

report::Verdict expectation_verdict(const report::Report& rep) {
  const report::Result& r = rep.results.front();
  if (gpu_did_not_run(rep)) return no_gpu_verdict(rep);
  report::Verdict v;
  if (r.expectation_met == false)
    v = {report::VerdictStatus::findings,
         {r.case_id + ": " + what_happened(r) + ", a healthy host gives " + r.expected}};
  else
    v = {report::VerdictStatus::ok,
         {r.case_id + ": " + std::string(report::to_string(r.outcome)) +
          (r.expected.empty() ? "" : " as expected (" + r.expected + ")")}};
  if (const auto site = site_reason(r); !site.empty()) v.reasons.push_back(site);
  return v;
}

report::Verdict output_verdict(const report::Report& rep, profiles::Allocator allocator) {
  const report::Result& r = rep.results.front();
  if (gpu_did_not_run(rep)) return no_gpu_verdict(rep);
  if (r.outcome == Outcome::ok) return {report::VerdictStatus::ok, {"output matches the CPU reference bit for bit"}};
  // A finding about the configuration; whether a healthy host gives the same is the
  // expectation's business.
  report::Verdict v{report::VerdictStatus::findings, {what_happened(r)}};
  if (r.expectation_met.has_value())
    v.reasons.push_back(std::string(*r.expectation_met ? "as expected" : "NOT as expected") +
                        " for these parameters under " + std::string(profiles::to_string(allocator)) + " (" +
                        r.expected + ")");
  if (const auto site = site_reason(r); !site.empty()) v.reasons.push_back(site);
  return v;
}

}  // namespace cudadiag::suite

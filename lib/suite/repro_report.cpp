#include "suite/repro_report.h"

#include "evidence/interruption.h"
#include "evidence/session_report.h"
#include "suite/repro_request.h"
#include "report/standout.h"
#include "suite/verdict.h"

namespace cudadiag::suite {

using report::json;

report::Report repro_report(report::Report r, const Suite& s, const PlanOptions& popts, const Plan& plan,
                            SuiteOutcome outcome, const ReproFacts& facts) {
  // CUDA that could not start in the children is an environment problem, not a finding.
  size_t gpu_results = 0, unusable = 0;
  for (const auto& res : outcome.results) {
    if (!res.device.is_gpu()) continue;
    ++gpu_results;
    if (res.outcome == report::Outcome::skipped && res.reason.rfind("CUDA unusable", 0) == 0) ++unusable;
  }
  const bool gpu_ran = !popts.devices.empty() && !(gpu_results > 0 && unusable == gpu_results);
  r.gpu = {gpu_ran, !popts.devices.empty() ? (gpu_ran ? "" : outcome.cuda_unusable) : popts.no_gpu_reason};

  json section = suite_json(s);
  section["plan"] = json{{"case_runs", plan.total_runs()},          {"children_planned", plan.batches.size()},
                         {"children_started", outcome.children},    {"host_runs", plan.count(Venue::host)},
                         {"skipped", plan.count(Venue::skipped)},   {"jobs", facts.jobs},
                         {"wall_ms", outcome.wall_ms}};
  if (!popts.profiles_override.empty()) {
    json names = json::array();
    for (const auto& p : popts.profiles_override) names.push_back(p.name);
    section["profiles"] = names;
  }
  json devs = json::array();
  for (const auto& d : popts.devices) devs.push_back(json{{"index", d.index}, {"uuid", d.uuid}, {"name", d.name}});
  section["devices"] = devs;
  if (facts.wants_sanitizer)
    section["sanitizer"] = evidence::sanitizer_json(facts.sanitizer.found, facts.sanitizer.path, facts.sanitizer.reason);

  r.results = std::move(outcome.results);
  r.verdict = decide_verdict(r.results, outcome.interrupted);  // says so among its reasons
  // A GPU whose failures the other GPUs do not share is named first.
  const auto standouts = report::find_standouts(r.results, r.devices);
  json standout = json::array();
  for (auto it = standouts.rbegin(); it != standouts.rend(); ++it) {
    r.verdict.reasons.insert(r.verdict.reasons.begin(), report::standout_line(*it));
  }
  for (const auto& g : standouts)
    standout.push_back(json{{"index", g.index}, {"uuid", g.uuid}, {"pci_bus_id", g.pci_bus_id}, {"runs", g.runs}});
  if (!standout.empty()) section["standout_gpus"] = standout;
  r.extra.set("suite", report::value_from_json(section));
  evidence::record_interruption(r, outcome.interrupted);
  if (!gpu_ran && r.verdict.status != report::VerdictStatus::suspect)
    r.verdict.reasons.insert(r.verdict.reasons.begin(), "GPU part could not run: " + r.gpu.reason.value_or(""));
  report::finish_report(r);
  return r;
}

report::Report repro_report(report::Report r, const Request& request, SuiteOutcome outcome) {
  return repro_report(std::move(r), request.suite, request.plan_options, request.plan, std::move(outcome),
                      request.facts);
}

}  // namespace cudadiag::suite

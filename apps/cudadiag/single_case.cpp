#include "single_case.h"

#include <chrono>
#include <set>

#include "cases/bisect.h"
#include "cases/expectation.h"
#include "cases/run_expectation.h"
#include "cli_common.h"
#include "suite/executor.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

suite::ExecOptions exec_options(const SingleCaseOptions& opts) {
  suite::ExecOptions eo;
  eo.self_exe = invocation().self_exe;
  if (opts.blocking) eo.env_set["CUDA_LAUNCH_BLOCKING"] = "1";
  if (opts.deadline_ms > 0) eo.deadline = std::chrono::milliseconds(opts.deadline_ms);
  eo.profile = cases::profile_for_run(opts.allocator, opts.blocking, opts.fence_allocator);
  return eo;
}

bool is_memory_fault(const report::Result& r) {
  return r.outcome == "cuda_error" && r.error && r.error->error_class == "memory_fault";
}

// Buffer names in allocation order, once each.
std::vector<std::string> buffer_names(const report::Result& r) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& b : r.buffers)
    if (b.contains("name") && b["name"].is_string() && seen.insert(b["name"].get<std::string>()).second)
      names.push_back(b["name"].get<std::string>());
  return names;
}

void bisect_fault(report::Result& r, const cases::CaseSpec& spec, const suite::ExecOptions& eo) {
  const auto names = buffer_names(r);
  spdlog::info("{} faulted under {}: bisecting over {} buffers", spec.case_id, spec.allocator, names.size());
  const cases::FaultProbe probe = [&](const std::vector<std::string>& fenced, const std::string& allocator) {
    cases::CaseSpec s = spec;
    s.allocator = allocator;
    s.repeat = 1;
    s.fence_buffers = fenced;
    const auto results = suite::execute({s}, eo);
    return !results.empty() && is_memory_fault(results.front());
  };
  cases::FaultingBuffer fb = cases::bisect(names, spec.allocator, probe);
  if (fb.found)
    for (const auto& b : r.buffers)
      if (b.value("name", "") == fb.name) fb.bytes = b.value("bytes", 0ull);
  r.faulting_buffer = cases::to_json(fb);
  r.details["bisection"] = cases::bisection_json(fb);
  if (fb.found) spdlog::info("faulting buffer: {} ({})", fb.name, fb.direction);
  else spdlog::info("bisection found no single buffer: {}", fb.note);
}

}  // namespace

bool gpu_unavailable(const report::Result& r) {
  return r.outcome == "cuda_error" && r.error &&
         (r.error->error_class == "no_device" || r.error->error_class == "driver_mismatch");
}

report::Report run_single_case(const cases::CaseSpec& spec, const SingleCaseOptions& opts) {
  const suite::ExecOptions eo = exec_options(opts);
  report::Report rep = report::new_report(invocation().argv, opts.command);
  rep.environment = report::capture_environment(invocation().envp);

  auto results = suite::execute({spec}, eo);
  if (results.empty()) throw std::runtime_error("the executor returned no result for " + spec.case_id);
  report::Result r = std::move(results.front());
  if (gpu_unavailable(r)) {
    rep.gpu = report::json{{"ran", false}, {"reason", r.error->name + " (" + std::to_string(r.error->code) +
                                                          "): " + r.error->message}};
    r.expected = opts.expected;
    r.expectation_met.reset();
  } else {
    rep.gpu = report::json{{"ran", true}};
    cases::judge(r, opts.expected);
    const bool fenced = spec.allocator == "fence-back" || spec.allocator == "fence-front";
    if (opts.bisect && fenced && !spec.fence_buffers && is_memory_fault(r)) bisect_fault(r, spec, eo);
  }
  rep.results.push_back(std::move(r));
  report::finish_report(rep);
  return rep;
}

}  // namespace cudadiag::app

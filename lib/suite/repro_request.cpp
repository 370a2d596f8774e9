#include "suite/repro_request.h"

#include <stdexcept>

#include "profiles/sanitizer_tool.h"
#include "repeat/seeds.h"
#include "suite/device_plan.h"
#include "suite/device_selection.h"
#include "util/errors.h"
#include "util/log.h"

namespace cudadiag::suite {

Request resolve_request(const Args& args, const evidence::Parent& parent) {
  Request req;
  req.suite = load_suite(args.suite);
  if (!args.case_glob.empty()) filter_cases(req.suite, args.case_glob);
  PlanOptions& popts = req.plan_options;
  popts.profiles_override = args.profiles;
  popts.repeat_override = args.repeat;
  try {
    popts.seed = repeat::seed_request(args.seed, "");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  // What the parent knows of the host, gathered once for the plan and the report.
  if (parent.host_facts) req.host = parent.host_facts();
  popts.devices = args.plan_devices > 0 ? planned_devices(args.plan_devices)
                                       : select_devices(req.host, args.devices, &popts.no_gpu_reason);

  ReproFacts& facts = req.facts;
  for (const auto& p : planned_profiles(req.suite, popts)) facts.wants_sanitizer = facts.wants_sanitizer || p.sanitizer;
  if (facts.wants_sanitizer) {
    facts.sanitizer = profiles::find_compute_sanitizer(parent.getenv);
    popts.sanitizer_available = facts.sanitizer.found;
    popts.sanitizer_reason = facts.sanitizer.reason;
    if (!facts.sanitizer.found) spdlog::warn("sanitizer profile skipped: {}", facts.sanitizer.reason);
  }

  req.plan = make_plan(req.suite, popts);
  facts.jobs = args.jobs > 0 ? args.jobs : default_jobs(popts.devices.size(), parent.cpus);

  SuiteRunOptions& run = req.run;
  run.self_exe = parent.self_exe;
  run.jobs = facts.jobs;
  run.devices = popts.devices;
  run.default_deadline = std::chrono::milliseconds(static_cast<long long>(args.timeout_s * 1000.0));
  run.sanitizer_path = facts.sanitizer.path;
  run.stop = parent.stop;
  run.coredump = args.coredump;

  const Plan& plan = req.plan;
  spdlog::info("suite {}: {} case runs ({} in {} children, {} on the host, {} skipped), -j {}", req.suite.name,
               plan.total_runs(), plan.child_runs(), plan.batches.size(), plan.count(Venue::host),
               plan.count(Venue::skipped), facts.jobs);
  if (popts.devices.empty()) spdlog::warn("GPU part cannot run: {}", popts.no_gpu_reason);
  return req;
}

}  // namespace cudadiag::suite

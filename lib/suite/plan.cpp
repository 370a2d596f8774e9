#include "suite/plan.h"

#include <algorithm>
#include <map>
#include <utility>

namespace cudadiag::suite {

size_t Plan::count(Venue v) const {
  return static_cast<size_t>(std::count_if(runs.begin(), runs.end(), [v](const PlannedCase& r) { return r.venue == v; }));
}

bool needs_own_child(const cases::CaseDef& def, const cases::Expectation& e) {
  // A known-bad reproducer with no expectation here may fault: keep it alone.
  if (e.text().empty()) return def.expects_fault;
  // A known-bad reproducer expected to stay silent under this profile (an overrun that
  // lands in pooled memory) shares a child: if it faults after all, the executor ends
  // that child and re-runs the cases after it in a fresh one. A process start costs
  // more than most cases (context creation contends between children), so every shared
  // case counts towards the suite's wall time.
  // Expected launch errors that leave the context usable do not end the child.
  if (e.keeps_context()) return false;
  // A case that is not expected to finish cleanly may leave a sticky error or hang.
  return !e.accepts_clean();
}

double estimate_cost_ms(const Batch& b, const Plan& plan) {
  constexpr double kStartMs = 300;  // process start and context creation
  double cost = kStartMs;
  for (size_t i : b.runs) {
    const PlannedCase& run = plan.runs[i];
    double one = cases::estimate_run_ms(run.spec.family, run.spec.params);
    if (run.expectation.expects_timeout()) one = b.deadline_ms > 0 ? b.deadline_ms : 60000;
    cost += one * std::max(1, run.spec.repeat);
  }
  if (b.sanitizer) cost *= 10;  // memcheck instruments every access
  return cost;
}

std::vector<profiles::Profile> planned_profiles(const Suite& s, const PlanOptions& opts) {
  std::vector<profiles::Profile> out;
  for (const auto& c : s.cases)
    for (const auto& p : opts.profiles_override.empty() ? c.profiles : opts.profiles_override)
      if (std::none_of(out.begin(), out.end(), [&](const auto& q) { return q.name == p.name; })) out.push_back(p);
  return out;
}

Plan make_plan(const Suite& s, const PlanOptions& opts) {
  Plan plan;
  // Shared batches keyed by (profile, device slot), in first-seen order.
  std::map<std::pair<std::string, int>, std::vector<size_t>> shared_of;
  std::vector<Batch> own;

  auto add_run = [&](const SuiteCase& sc, size_t ci, const profiles::Profile& prof, const cases::Expectation& e,
                     int slot, int repeat, Venue venue, std::string reason = "") {
    PlannedCase run;
    run.spec.index = static_cast<int>(plan.runs.size());
    run.spec.case_id = sc.def.id;
    run.spec.family = sc.def.family;
    run.spec.params = sc.def.params;
    run.spec.allocator = cases::allocator_for(sc.def, prof);
    run.spec.repeat = repeat;
    run.spec.seed = opts.seed;
    run.suite_case = ci;
    run.profile = prof;
    run.expectation = e;
    run.device_slot = slot;
    run.venue = venue;
    run.skip_reason = std::move(reason);
    plan.runs.push_back(std::move(run));
    return plan.runs.size() - 1;
  };

  for (size_t ci = 0; ci < s.cases.size(); ++ci) {
    const SuiteCase& sc = s.cases[ci];
    const auto& profile_list = opts.profiles_override.empty() ? sc.profiles : opts.profiles_override;
    const int repeat = opts.repeat_override > 0 ? opts.repeat_override : sc.repeat;
    const auto& family = cases::family(sc.def.family);

    for (const auto& prof : profile_list) {
      const cases::Expectation e = cases::expectation_for(sc.def, prof);
      if (sc.def.host_only && family.host_eval) {
        add_run(sc, ci, prof, e, -1, repeat, Venue::host);
        continue;
      }
      if (prof.sanitizer && !opts.sanitizer_available && !sc.def.host_only) {
        add_run(sc, ci, prof, e, -1, repeat, Venue::skipped, opts.sanitizer_reason);
        continue;
      }
      // Host-only cases without host_eval still need no GPU: one child, no device.
      std::vector<int> slots;
      if (sc.def.host_only) {
        slots.push_back(-1);
      } else if (opts.devices.empty()) {
        add_run(sc, ci, prof, e, -1, repeat, Venue::skipped, opts.no_gpu_reason);
        continue;
      } else {
        for (size_t d = 0; d < opts.devices.size(); ++d) slots.push_back(static_cast<int>(d));
      }
      const bool alone = prof.sanitizer || needs_own_child(sc.def, e);
      for (int slot : slots) {
        if (alone) {
          // Repeats of a faulting case each get a fresh child: a sticky error ends a context.
          for (int r = 0; r < repeat; ++r) {
            Batch b;
            b.device_slot = slot;
            b.own_child = true;
            b.sanitizer = prof.sanitizer;
            b.runs.push_back(add_run(sc, ci, prof, e, slot, 1, Venue::child));
            b.deadline_ms = sc.def.deadline_ms;
            if (e.expects_timeout()) b.grace_ms = kTimeoutCaseGraceMs;
            own.push_back(std::move(b));
          }
        } else {
          auto& list = shared_of[{prof.name, slot}];
          if (list.empty() || plan.batches[list.back()].runs.size() >= opts.max_batch) {
            Batch b;
            b.device_slot = slot;
            plan.batches.push_back(std::move(b));
            list.push_back(plan.batches.size() - 1);
          }
          const size_t run = add_run(sc, ci, prof, e, slot, repeat, Venue::child);
          Batch& b = plan.batches[list.back()];
          b.runs.push_back(run);
          b.deadline_ms = std::max(b.deadline_ms, sc.def.deadline_ms);
        }
      }
    }
  }
  for (auto& b : own) plan.batches.push_back(std::move(b));
  // Longest first: a long child started last would be the whole tail of the run.
  for (auto& b : plan.batches) b.est_cost_ms = estimate_cost_ms(b, plan);
  std::stable_sort(plan.batches.begin(), plan.batches.end(),
                   [](const Batch& a, const Batch& b) { return a.est_cost_ms > b.est_cost_ms; });
  return plan;
}

}  // namespace cudadiag::suite

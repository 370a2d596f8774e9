#include "suite/plan.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <cstdlib>
#include <sstream>

#include "cases/expectation.h"
#include "profiles/profile.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::suite {

size_t Plan::child_runs() const {
  size_t n = 0;
  for (const auto& b : batches) n += b.specs.size();
  return n;
}

size_t Plan::total_runs() const { return child_runs() + host_runs.size() + skipped.size(); }

namespace {

// An error class leaves the context usable when the taxonomy knows it and none of its
// errors is sticky (invalid_value, launch_config: yes; memory_fault: no).
bool class_keeps_context(const std::string& error_class) {
  if (!taxonomy::is_known_class(error_class)) return false;
  for (const auto& e : taxonomy::all())
    if (e.error_class == error_class && e.sticky) return false;
  return true;
}

}  // namespace

bool expectation_keeps_context(const std::string& expectation) {
  if (expectation.empty()) return true;
  std::stringstream ss(expectation);
  std::string alt;
  while (std::getline(ss, alt, '|')) {
    if (alt == "ok" || alt == "silent" || alt == "mismatch" || alt == "invalid_config") continue;
    if (alt.rfind("error:", 0) != 0) return false;  // "error", "timeout", "any"...
    const std::string code = alt.substr(6);
    if (code.empty()) return false;
    if (code.find_first_not_of("0123456789") != std::string::npos) {
      if (!class_keeps_context(code)) return false;
      continue;
    }
    const auto* entry = taxonomy::find_runtime(std::atoi(code.c_str()));
    if (!entry || entry->sticky) return false;
  }
  return true;
}

bool needs_own_child(const cases::CaseDef& def, const std::string& expectation) {
  const auto e = cases::Expectation::parse(expectation);
  // A known-bad reproducer with no expectation here may fault: keep it alone.
  if (e.empty()) return def.expects_fault;
  // A known-bad reproducer expected to stay silent under this profile (an overrun that
  // lands in pooled memory) shares a child: if it faults after all, the executor ends
  // that child and re-runs the cases after it in a fresh one. A process start costs
  // more than most cases (context creation contends between children), so every shared
  // case counts towards the suite's wall time.
  // Expected launch errors that leave the context usable do not end the child.
  if (expectation_keeps_context(expectation)) return false;
  // A case that is not expected to finish cleanly may leave a sticky error or hang.
  report::Result clean;
  clean.outcome = "ok";
  return !e.matches(clean);
}

double estimate_cost_ms(const Batch& b, const std::vector<std::string>& expectations) {
  constexpr double kStartMs = 300;     // process start and context creation
  constexpr double kCaseMs = 30;       // a small kernel, its reference and the check
  double cost = kStartMs;
  for (size_t i = 0; i < b.specs.size(); ++i) {
    const auto& spec = b.specs[i];
    double one = kCaseMs;
    const std::string& e = i < expectations.size() ? expectations[i] : std::string();
    if (e.find("timeout") != std::string::npos) one = b.deadline_ms > 0 ? b.deadline_ms : 60000;
    if (spec.kernel == "attention" && spec.params.is_object() && spec.params.contains("seq_len") &&
        spec.params["seq_len"].is_number_integer()) {
      const double sl = spec.params["seq_len"].get<double>();
      one += kCaseMs * (sl * sl) / (256.0 * 256.0);  // quadratic in the sequence
    }
    cost += one * std::max(1, spec.repeat);
  }
  if (b.sanitizer) cost *= 10;  // memcheck instruments every access
  return cost;
}

Plan make_plan(const Suite& s, const PlanOptions& opts) {
  Plan plan;
  int next_index = 0;
  // Shared batches keyed by (profile, device slot), in first-seen order.
  std::map<std::pair<std::string, int>, std::vector<size_t>> shared_of;
  std::vector<Batch> own;

  auto make_spec = [&](const SuiteCase& sc, const profiles::Profile& prof, int repeat) {
    cases::CaseSpec spec;
    spec.index = next_index++;
    spec.case_id = sc.def.id;
    spec.kernel = sc.def.kernel;
    spec.params = sc.def.params;
    spec.allocator = profiles::allocator_for(prof, sc.def.fence_allocator);
    spec.repeat = repeat;
    return spec;
  };

  for (size_t ci = 0; ci < s.cases.size(); ++ci) {
    const SuiteCase& sc = s.cases[ci];
    const auto& profile_names = opts.profiles_override.empty() ? sc.profiles : opts.profiles_override;
    const int repeat = opts.repeat_override > 0 ? opts.repeat_override : sc.repeat;
    const auto* family = cases::find_family(sc.def.kernel);

    for (const auto& pname : profile_names) {
      const auto prof = profiles::parse_profile(pname);
      if (sc.def.host_only && family && family->host_eval) {
        plan.host_runs.push_back({ci, prof.name});
        continue;
      }
      if (prof.sanitizer && !opts.sanitizer_available && !sc.def.host_only) {
        plan.skipped.push_back({ci, prof.name, -1, opts.sanitizer_reason});
        continue;
      }
      // Host-only cases without host_eval still need no GPU: one child, no device.
      std::vector<int> slots;
      if (sc.def.host_only) {
        slots.push_back(-1);
      } else if (opts.devices.empty()) {
        plan.skipped.push_back({ci, prof.name, -1, opts.no_gpu_reason});
        continue;
      } else {
        for (size_t d = 0; d < opts.devices.size(); ++d) slots.push_back(static_cast<int>(d));
      }
      const std::string expectation = cases::expectation_for(sc.def, prof.name);
      const bool alone = prof.sanitizer || needs_own_child(sc.def, expectation);
      for (int slot : slots) {
        if (alone) {
          // Repeats of a faulting case each get a fresh child: a sticky error ends a context.
          for (int r = 0; r < repeat; ++r) {
            Batch b;
            b.profile = prof.name;
            b.device_slot = slot;
            b.own_child = true;
            b.sanitizer = prof.sanitizer;
            b.specs.push_back(make_spec(sc, prof, 1));
            b.case_of_spec.push_back(ci);
            b.deadline_ms = sc.def.deadline_ms;
            if (expectation.find("timeout") != std::string::npos) b.grace_ms = kTimeoutCaseGraceMs;
            own.push_back(std::move(b));
          }
        } else {
          auto& list = shared_of[{prof.name, slot}];
          if (list.empty() || plan.batches[list.back()].specs.size() >= opts.max_batch) {
            Batch b;
            b.profile = prof.name;
            b.device_slot = slot;
            plan.batches.push_back(std::move(b));
            list.push_back(plan.batches.size() - 1);
          }
          Batch& b = plan.batches[list.back()];
          b.specs.push_back(make_spec(sc, prof, repeat));
          b.case_of_spec.push_back(ci);
          b.deadline_ms = std::max(b.deadline_ms, sc.def.deadline_ms);
        }
      }
    }
  }
  for (auto& b : own) plan.batches.push_back(std::move(b));
  // Longest first: a long child started last would be the whole tail of the run.
  for (auto& b : plan.batches) {
    std::vector<std::string> exps;
    for (size_t i = 0; i < b.specs.size(); ++i)
      exps.push_back(cases::expectation_for(s.cases[b.case_of_spec[i]].def, b.profile));
    b.est_cost_ms = estimate_cost_ms(b, exps);
  }
  std::stable_sort(plan.batches.begin(), plan.batches.end(),
                   [](const Batch& a, const Batch& b) { return a.est_cost_ms > b.est_cost_ms; });
  return plan;
}

}  // namespace cudadiag::suite

#include "child_harness.h"

#include <cstdio>
#include <map>
#include <random>

#include "stats/wilson.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::app::child {
namespace {

using report::Outcome;

std::uint64_t fresh_seed() {
  static std::random_device entropy;
  return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

int repeats_of(const runner::CaseSpec& spec) {
  if (spec.repeat > 1) return spec.repeat;
  if (spec.params.contains("repeat") && spec.params["repeat"].is_number_integer())
    return std::max(1, spec.params["repeat"].get<int>());
  return 1;
}

std::optional<std::uint64_t> given_seed(const runner::CaseSpec& spec) {
  if (spec.seed) return spec.seed;
  if (spec.params.contains("seed") && spec.params["seed"].is_number_unsigned())
    return spec.params["seed"].get<std::uint64_t>();
  return std::nullopt;
}

report::RepeatStats repeat_stats(const std::map<std::string, int>& histogram, int runs) {
  report::RepeatStats s;
  s.runs = runs;
  for (const auto& [outcome, n] : histogram)
    if (outcome != report::to_string(Outcome::ok)) s.failures += n;
  s.failure_rate = runs ? static_cast<double>(s.failures) / runs : 0.0;
  const auto ci = stats::wilson_interval(s.failures, runs);
  s.ci_low = ci.low;
  s.ci_high = ci.high;
  s.histogram = histogram;
  return s;
}

}  // namespace

report::ErrorInfo error_info(const gpu::CudaFailure& f) {
  report::ErrorInfo e;
  e.code = f.code;
  e.name = f.name;
  e.source = f.driver ? "driver" : "runtime";
  e.message = f.message;
  e.surfaced_at = f.surfaced_at;
  e.api_call = f.api_call;
  e.location = f.location;
  e.last_kernel = f.last_kernel;
  return e;
}

json launch_log_json(const gpu::Session& s, size_t tail) {
  json out = json::array();
  const auto& launches = s.launches();
  const size_t first = launches.size() > tail ? launches.size() - tail : 0;
  for (size_t i = first; i < launches.size(); ++i) {
    const auto& l = launches[i];
    out.push_back(json{{"seq", l.seq},
                       {"kernel", l.kernel},
                       {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                       {"block", {l.block[0], l.block[1], l.block[2]}},
                       {"dynamic_smem", l.dynamic_smem},
                       {"buffers", l.buffers}});
  }
  return out;
}

json buffers_json(const gpu::Session& s) {
  json out = json::array();
  char range[64];
  for (const auto& b : s.buffers()) {
    std::snprintf(range, sizeof range, "0x%llx-0x%llx", b.address, b.address + b.bytes);
    out.push_back(json{{"name", b.name},
                       {"bytes", b.bytes},
                       {"range", range},
                       {"allocator", profiles::to_string(b.mode)},
                       {"freed", b.freed}});
  }
  return out;
}

std::unique_ptr<gpu::Session> open_session(const runner::CaseSpec& spec) {
  // Bisection: the fenced buffers are overrides, every other buffer is direct.
  auto s = std::make_unique<gpu::Session>(spec.fence_buffers ? gpu::AllocatorMode::direct : spec.allocator);
  if (spec.fence_buffers)
    for (const auto& name : *spec.fence_buffers) s->set_buffer_mode(name, spec.allocator);
  return s;
}

bool is_sticky(const gpu::CudaFailure& f) {
  const auto* e = f.driver ? taxonomy::find_driver(f.code) : taxonomy::find_runtime(f.code);
  return e ? e->sticky : true;  // unknown errors: assume the context is gone
}

report::Result run_case(const runner::CaseSpec& spec, CaseFactory factory) {
  report::Result r;
  r.case_id = spec.case_id;
  r.kernel = std::string(cases::to_string(spec.family));
  r.params = spec.params;
  r.allocator = spec.allocator;

  std::unique_ptr<CaseRun> run;
  try {
    run = factory(spec);
  } catch (const InvalidConfig& e) {
    r.outcome = Outcome::invalid_config;
    r.reason = e.what();
    r.details = e.details();
    return r;
  } catch (const std::invalid_argument& e) {
    r.outcome = Outcome::invalid_config;
    r.reason = e.what();
    return r;
  } catch (const gpu::CudaError& e) {
    r.outcome = Outcome::cuda_error;
    r.error = error_info(e.failure());
    return r;
  }

  const int repeat = repeats_of(spec);
  const auto seed0 = given_seed(spec);
  std::map<std::string, int> histogram;
  int runs = 0;
  std::optional<gpu::CudaFailure> failure;
  std::optional<Trial> first_bad, last;
  std::uint64_t first_bad_seed = 0, last_seed = 0;
  int first_bad_run = -1;
  bool ended_by_sticky_error = false;
  for (int i = 0; i < repeat; ++i) {
    const std::uint64_t seed = seed0 ? *seed0 + static_cast<std::uint64_t>(i) : fresh_seed();
    ++runs;
    try {
      Trial t = run->run(seed);
      ++histogram[std::string(report::to_string(t.outcome))];
      if (t.outcome != Outcome::ok && !first_bad) {
        first_bad = t;
        first_bad_seed = seed;
        first_bad_run = i;
      }
      last = std::move(t);
      last_seed = seed;
    } catch (const gpu::CudaError& e) {
      ++histogram[std::string(report::to_string(Outcome::cuda_error))];
      if (!failure) {
        failure = e.failure();
        first_bad_seed = seed;
        first_bad_run = i;
      }
      if (is_sticky(e.failure())) {
        ended_by_sticky_error = true;
        break;  // the context is gone: report the runs so far
      }
    }
  }

  const Trial* shown = first_bad ? &*first_bad : last ? &*last : nullptr;
  if (failure) {
    r.outcome = Outcome::cuda_error;
    r.error = error_info(*failure);
    r.reason = failure->message;
  } else if (shown) {
    r.outcome = shown->outcome;
    r.reason = shown->reason;
    r.error = shown->error;
  }
  r.details = run->facts();
  if (shown)
    for (auto& [k, v] : shown->details.items()) r.details[k] = v;
  r.details["seed"] = failure || first_bad ? first_bad_seed : last_seed;
  if (first_bad_run >= 0) r.details["first_failing_run"] = first_bad_run;
  if (!ended_by_sticky_error) {
    try {
      const json summary = run->summary();
      for (const auto& [k, v] : summary.items()) r.details[k] = v;
    } catch (const gpu::CudaError& e) {
      r.details["summary_error"] = e.failure().name + " at " + e.failure().api_call;
    }
  }
  r.repeats = repeat_stats(histogram, runs);
  if (const gpu::Session* s = run->session()) {
    r.launch_log = launch_log_json(*s);
    r.buffers = buffers_json(*s);
  }
  return r;
}

}  // namespace cudadiag::app::child

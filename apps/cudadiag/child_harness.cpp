#include "child_harness.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "repeat/series.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::app::child {
namespace {

using report::Outcome;
using clock = std::chrono::steady_clock;

std::uint64_t fresh_seed() {
  static std::random_device entropy;
  return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

int repeats_of(const suite::CaseSpec& spec) {
  if (spec.repeat > 1) return spec.repeat;
  if (spec.params.contains("repeat") && spec.params["repeat"].is_number_integer())
    return std::max(1, spec.params["repeat"].get<int>());
  return 1;
}

std::optional<repeat::SeedRequest> seed_request_of(const suite::CaseSpec& spec) {
  if (spec.seed) return spec.seed;
  if (spec.params.contains("seed") && spec.params["seed"].is_number_unsigned())
    return repeat::SeedRequest{repeat::SeedRequest::Kind::series, spec.params["seed"].get<std::uint64_t>()};
  return std::nullopt;
}

double seconds_since(clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); }

// What the result keeps of a series beyond the counts (repeat::Series keeps those): the
// first failing trial, the latest one, the first CUDA error, and the host cross-check.
struct Kept {
  std::optional<Trial> first_bad, last;
  std::optional<gpu::CudaFailure> failure;
  json host_check = nullptr;
  double host_check_seconds = 0.0;

  void trial(Trial t) {
    if (t.outcome != Outcome::ok && !first_bad) first_bad = t;
    last = std::move(t);
  }
};

// The host's check of run 0 folded into its trial: a disagreement makes it a mismatch.
void cross_check(CaseRun& run, std::uint64_t seed, Trial& t, Kept& kept) {
  const auto t0 = clock::now();
  const std::optional<HostCheck> hc = run.host_check(seed, t);
  kept.host_check_seconds = seconds_since(t0);
  if (!hc) return;
  kept.host_check = hc->details;
  kept.host_check["agrees"] = hc->agrees;
  kept.host_check["seconds"] = kept.host_check_seconds;
  if (hc->agrees) return;
  kept.host_check["disagreement"] = hc->disagreement;
  t.outcome = Outcome::mismatch;
  t.reason = hc->disagreement;
}

void merge_into(json& into, const json& from) {
  for (const auto& [k, v] : from.items()) into[k] = v;
}

}  // namespace

report::ErrorInfo error_info(const gpu::CudaFailure& f) {
  report::ErrorInfo e;
  e.code = f.code;
  e.name = f.name;
  e.source = f.driver ? taxonomy::ErrorSource::driver : taxonomy::ErrorSource::runtime;
  e.message = f.message;
  e.surfaced_at = f.surfaced_at;
  e.api_call = f.api_call;
  e.location = f.location;
  e.last_kernel = f.last_kernel;
  return e;
}

std::vector<report::LaunchRecord> launch_log_of(const gpu::Session& s, size_t tail) {
  std::vector<report::LaunchRecord> out;
  const auto& launches = s.launches();
  const size_t first = launches.size() > tail ? launches.size() - tail : 0;
  for (size_t i = first; i < launches.size(); ++i) {
    const auto& l = launches[i];
    report::LaunchRecord r;
    r.seq = l.seq;
    r.kernel = l.kernel;
    r.grid = {l.grid[0], l.grid[1], l.grid[2]};
    r.block = {l.block[0], l.block[1], l.block[2]};
    r.dynamic_smem = l.dynamic_smem;
    r.buffers = l.buffers;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<report::BufferRecord> buffers_of(const gpu::Session& s) {
  std::vector<report::BufferRecord> out;
  for (const auto& b : s.buffers())
    out.push_back(report::BufferRecord{b.name, b.bytes, report::AddressRange{b.address, b.address + b.bytes},
                                       profiles::Allocator(b.mode), b.freed});
  return out;
}

std::unique_ptr<gpu::Session> open_session(const suite::CaseSpec& spec) {
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

Batch CaseRun::run_batch(const std::vector<std::uint64_t>& seeds) {
  Batch b;
  for (std::uint64_t seed : seeds) {
    try {
      b.trials.push_back(run(seed));
    } catch (const gpu::CudaError& e) {
      b.error = e.failure();
      break;
    }
  }
  return b;
}

Trial run_alone(CaseRun& c, std::uint64_t seed) {
  Batch b = c.run_batch({seed});
  if (b.error) throw gpu::CudaError(*b.error);
  if (b.trials.size() != 1) throw std::logic_error("run_batch returned no run and no error");
  return std::move(b.trials.front());
}

report::Result run_case(const suite::CaseSpec& spec, CaseFactory factory) {
  report::Result r;
  r.case_id = spec.case_id;
  r.kernel = spec.family;
  r.params = report::fields_from_json(spec.params);
  r.allocator = spec.allocator;

  std::unique_ptr<CaseRun> run;
  try {
    run = factory(spec);
  } catch (const InvalidConfig& e) {
    r.outcome = Outcome::invalid_config;
    r.reason = e.what();
    r.details = report::fields_from_json(e.details());
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

  repeat::Series series(repeats_of(spec), seed_request_of(spec), fresh_seed());
  Kept kept;
  const auto t0 = clock::now();
  while (!series.finished()) {
    const std::vector<std::uint64_t> seeds = series.next_batch();
    Batch b = run->run_batch(seeds);
    if (b.trials.size() > seeds.size() || (!b.error && b.trials.size() < seeds.size()))
      throw std::logic_error("run_batch returned " + std::to_string(b.trials.size()) + " runs for " +
                             std::to_string(seeds.size()) + " seeds");
    for (size_t i = 0; i < b.trials.size(); ++i) {
      Trial& t = b.trials[i];
      if (series.next_run() == 0) {
        try {
          cross_check(*run, seeds[i], t, kept);
        } catch (const gpu::CudaError& e) {
          b.error = e.failure();  // the check's copies failed: this run ends with that error
          b.trials.resize(i);
          break;
        }
      }
      series.record(t.outcome);
      kept.trial(std::move(t));
    }
    if (b.error) {
      series.record_error(is_sticky(*b.error));
      if (!kept.failure) kept.failure = *b.error;
    }
  }
  const double seconds = seconds_since(t0) - kept.host_check_seconds;

  const Trial* shown = kept.first_bad ? &*kept.first_bad : kept.last ? &*kept.last : nullptr;
  if (kept.failure) {
    r.outcome = Outcome::cuda_error;
    r.error = error_info(*kept.failure);
    r.reason = kept.failure->message;
  } else if (shown) {
    r.outcome = shown->outcome;
    r.reason = shown->reason;
    r.error = shown->error;
  }
  // The families report their facts as JSON objects; they become the result's details here.
  json details = run->facts();
  if (shown) merge_into(details, shown->details);
  if (const auto reported = series.reported()) details["seed"] = reported->seed;
  if (series.replay()) details["replayed"] = true;
  else details["series_seed"] = series.base();
  if (const auto& f = series.first_failure())
    details["first_failure"] = json{{"run", f->index}, {"seed", f->seed}, {"replay", repeat::replay_hint(f->seed)}};
  if (!kept.host_check.is_null()) details["host_check"] = kept.host_check;
  if (!series.stopped()) {
    try {
      merge_into(details, run->summary());
    } catch (const gpu::CudaError& e) {
      details["summary_error"] = e.failure().name + " at " + e.failure().api_call;
    }
  }
  r.details = report::fields_from_json(details);
  r.repeats = series.stats(seconds);
  if (const gpu::Session* s = run->session()) {
    r.launch_log = launch_log_of(*s);
    r.buffers = buffers_of(*s);
  }
  return r;
}

}  // namespace cudadiag::app::child

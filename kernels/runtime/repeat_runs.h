#pragma once
// The repeat series of one case: runs in growing batches (1, 2, 4, ... max_batch) with
// one wait per batch, each run with its own seed, judged as its counters come back.
// The first run is alone in its batch, so that the caller can cross-check it on the host
// while the buffers still hold its data. Stops at the first CUDA error (the context of a
// sticky one is gone; a launch error repeats on every run). Plain C++ header.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/runtime/counter_rng.h"
#include "kernels/runtime/run_slots.h"

namespace cudadiag::gpu {

struct RepeatResult {
  int runs = 0;       // runs whose counters came back, plus the one a CUDA error ended
  int failures = 0;   // runs on_run judged failing
  std::optional<CudaFailure> error;
  int error_run = -1;          // the run during which the error surfaced
  uint64_t error_seed = 0;
  double seconds = 0.0;        // wall time of the series, on_run's own time excluded
  double on_run_seconds = 0.0; // time spent in on_run (host cross-checks)
};

// run_batch(const std::vector<uint64_t>& seeds) -> BatchResult;
// on_run(int run, uint64_t seed, const RunCounters&) -> bool (true: the run failed).
// Run i's seed is rng::run_seed(base_seed, i); a replay passes repeat 1 and seed_override.
template <class RunBatch, class OnRun>
RepeatResult repeat_runs(int repeat, int max_batch, uint64_t base_seed, std::optional<uint64_t> seed_override,
                         RunBatch&& run_batch, OnRun&& on_run) {
  using clock = std::chrono::steady_clock;
  RepeatResult r;
  const auto t0 = clock::now();
  int batch = 1;
  std::vector<uint64_t> seeds;
  for (int done = 0; done < repeat;) {
    const int n = std::min(batch, repeat - done);
    seeds.clear();
    for (int i = 0; i < n; ++i)
      seeds.push_back(seed_override ? *seed_override : rng::run_seed(base_seed, static_cast<uint64_t>(done + i)));
    BatchResult b = run_batch(seeds);
    for (size_t i = 0; i < b.counters.size(); ++i) {
      const auto c0 = clock::now();
      if (on_run(done + static_cast<int>(i), seeds[i], b.counters[i])) ++r.failures;
      r.on_run_seconds += std::chrono::duration<double>(clock::now() - c0).count();
    }
    r.runs += static_cast<int>(b.counters.size());
    if (b.error) {
      const int k = std::min(static_cast<int>(b.counters.size()), n - 1);
      r.error = std::move(b.error);
      r.error_run = done + k;
      r.error_seed = seeds[static_cast<size_t>(k)];
      r.runs = done + k + 1;
      break;
    }
    done += n;
    batch = std::min(batch * 2, max_batch);
  }
  r.seconds = std::chrono::duration<double>(clock::now() - t0).count() - r.on_run_seconds;
  return r;
}

}  // namespace cudadiag::gpu

#pragma once
// The bookkeeping of one repeat series, the same for every family; the child harness
// (apps/cudadiag/child_harness.cpp) drives it against the GPU:
//  - which seed each run uses (a fresh or given series base, or one replayed seed);
//  - the batches the runs go in: 1, 2, 4, ... kMaxBatch runs per wait, so run 0 is alone
//    (the host cross-checks it while the buffers still hold its data) and long series
//    wait once per kMaxBatch runs;
//  - the outcome histogram, the first failing run, the run the result reports, a stop
//    after a sticky error;
//  - the statistics: failure rate, its 95% Wilson interval, runs per second.
// Pure C++ (no CUDA), unit-tested.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "repeat/seeds.h"
#include "report/report.h"

namespace cudadiag::repeat {

// Runs per wait at most; families that batch on the device size their slots for it.
inline constexpr int kMaxBatch = 64;

// One run of a series.
struct RunRef {
  int index = 0;
  std::uint64_t seed = 0;
};

// The statistics of any series of runs (a family's repeats in one child, a `run` rung's
// repeats): runs (the histogram's total), failures, the rate and its 95% Wilson interval;
// seconds > 0: the series' wall time, and runs per second from it.
report::RepeatStats repeat_stats(const std::map<std::string, int>& histogram, int failures, double seconds = 0);

class Series {
 public:
  // runs: the series' length (at least 1; a replay runs once whatever it says);
  // request: the seed the user gave; without one, fresh_base (drawn by the caller) is
  // the series' base.
  Series(int runs, std::optional<SeedRequest> request, std::uint64_t fresh_base, int max_batch = kMaxBatch);

  // Seeds of the next batch, from the first run not yet recorded: 1, 2, 4, ... max_batch
  // runs (doubling per call), never past the end. Empty once finished().
  std::vector<std::uint64_t> next_batch();
  // Index of the first run not yet recorded (the next batch's first run).
  int next_run() const { return recorded_; }

  // The next run, in order, ended with this outcome; returns which run it was.
  RunRef record(report::Outcome outcome);
  // The next run ended with a CUDA error raised while it ran (its batch stops there); a
  // sticky one stops the series: the context is gone, the runs so far are the result.
  RunRef record_error(bool sticky);
  // No run after those recorded.
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  bool finished() const { return stopped_ || recorded_ >= planned_; }

  int planned() const { return planned_; }
  int recorded() const { return recorded_; }
  bool replay() const { return replay_; }
  // The series' base seed (for a replay, the replayed seed).
  std::uint64_t base() const { return base_; }
  std::uint64_t seed_of(int run) const;
  // The first run whose outcome was not ok, the first that raised a CUDA error, and the
  // latest run recorded.
  const std::optional<RunRef>& first_failure() const { return first_failure_; }
  const std::optional<RunRef>& first_error() const { return first_error_; }
  const std::optional<RunRef>& last() const { return last_; }
  // The run whose outcome the result reports: the first CUDA error raised, else the first
  // failure, else the latest run (none before a run is recorded).
  std::optional<RunRef> reported() const { return first_error_ ? first_error_ : first_failure_ ? first_failure_ : last_; }

  // Runs, failures (every outcome but ok), the rate and its 95% Wilson interval, the
  // histogram; seconds: the series' wall time in the child (runs per second from it).
  report::RepeatStats stats(double seconds) const;

 private:
  int planned_;
  bool replay_;
  std::uint64_t base_;
  int max_batch_;
  int batch_ = 1;
  int recorded_ = 0;
  bool stopped_ = false;
  std::map<report::Outcome, int> counts_;
  std::optional<RunRef> first_failure_, first_error_, last_;
};

}  // namespace cudadiag::repeat

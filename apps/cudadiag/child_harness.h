#pragma once
// Child side of the process model: the one repeat harness every family runs through.
// A family prepares a case in this process (which owns a CUDA context) and runs it for
// given seeds; the harness does the rest, the same for all (lib/repeat/series.h keeps
// the books): fresh seeds, a given series or one replayed seed; runs in growing batches
// (1, 2, 4, ... repeat::kMaxBatch per call, so a family that verifies on the device
// waits once per batch); the host cross-check of run 0 (and so of a replay) through the
// family; the outcome histogram, the failure rate with its 95% Wilson interval, the
// in-child wall time and runs per second; the first failing run's seed with a
// `--replay` hint; and a stop at the first sticky CUDA error (the context is gone; the
// parent re-runs what follows). Never called in the parent.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/runtime/gpu_runtime.h"
#include "report/report.h"
#include "suite/case_protocol.h"

namespace cudadiag::app::child {

using json = report::json;

// One verified run.
struct Trial {
  report::Outcome outcome = report::Outcome::ok;
  std::string reason;
  json details = json::object();
  std::optional<report::ErrorInfo> error;  // an error the family reports without throwing (an encode result)
};

// The runs of one batch: trials of the runs that came back, in seed order, and the CUDA
// error that ended run trials.size() when one did (the runs after it did not run).
struct Batch {
  std::vector<Trial> trials;
  std::optional<gpu::CudaFailure> error;
};

// The host's own check of a run whose buffers still hold its data.
struct HostCheck {
  bool agrees = true;        // false: the run counts as a mismatch, for this reason
  std::string disagreement;
  json details = json::object();
};

// A configuration that cannot run here: the case's result is invalid_config.
class InvalidConfig : public std::runtime_error {
 public:
  explicit InvalidConfig(const std::string& reason, json details = json::object())
      : std::runtime_error(reason), details_(std::move(details)) {}
  const json& details() const { return details_; }

 private:
  json details_;
};

class CaseRun {
 public:
  virtual ~CaseRun() = default;
  // One verified run with inputs drawn from `seed`. Throws gpu::CudaError.
  virtual Trial run(std::uint64_t seed) = 0;
  // One run per seed, in order (at most repeat::kMaxBatch). The default calls run() per
  // seed and stops at the first CUDA error; a family that verifies on the device queues
  // the whole batch and waits once.
  virtual Batch run_batch(const std::vector<std::uint64_t>& seeds);
  // The host's check of the run just finished, called for run 0 of every series (a
  // replay included) right after its batch of one; nullopt: the family has none here.
  // Throws gpu::CudaError.
  virtual std::optional<HostCheck> host_check(std::uint64_t /*seed*/, const Trial& /*device*/) {
    return std::nullopt;
  }
  // The session whose launch log and buffers the result shows (the latest run's).
  virtual const gpu::Session* session() const = 0;
  // What the case is, independent of any run (its geometry, the kernel chosen): always
  // in the details.
  virtual json facts() const { return json::object(); }
  // Facts of the whole case, merged into the details after the last run (the largest
  // error seen, timings). Called only when no sticky error ended the runs.
  virtual json summary() { return json::object(); }
};

// run() of a family that batches: its run_batch with one seed, the error rethrown.
Trial run_alone(CaseRun& c, std::uint64_t seed);

// A family's entry: validates and prepares one case. Throws InvalidConfig or
// std::invalid_argument (the result is invalid_config), gpu::CudaError.
using CaseFactory = std::unique_ptr<CaseRun> (*)(const suite::CaseSpec& spec);

// Runs the case: spec.repeat runs (params.repeat when the spec asks for one) seeded from
// spec.seed (a series base, or one replayed run), else from params.seed, else fresh.
report::Result run_case(const suite::CaseSpec& spec, CaseFactory factory);

// Helpers for families.
report::ErrorInfo error_info(const gpu::CudaFailure& f);
std::vector<report::LaunchRecord> launch_log_of(const gpu::Session& s, size_t tail = 16);
std::vector<report::BufferRecord> buffers_of(const gpu::Session& s);
// A session with the spec's allocator; for fault bisection (spec.fence_buffers) the
// named buffers keep the fence and every other one is direct.
std::unique_ptr<gpu::Session> open_session(const suite::CaseSpec& spec);
bool is_sticky(const gpu::CudaFailure& f);

}  // namespace cudadiag::app::child

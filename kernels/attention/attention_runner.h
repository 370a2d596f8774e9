#pragma once
// A prepared attention case for a repeat series: buffers allocated once, then per run
// (all on the device) fresh Q/K/V from the run's seed rounded to the dtype, O and the
// reference poisoned, the kernel under test, an fp32 reference, and a check that
// reduces the comparison into the run's RunCounters. The host reads back one small
// record per run. Plain C++ header.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/runtime/run_slots.h"

namespace cudadiag::attention {

// Random streams of the inputs (counter_rng.h): Q, K and V differ in every run.
inline constexpr uint32_t kStreamQ = 1, kStreamK = 2, kStreamV = 3;

class AttentionRunner {
 public:
  // extents: elements each of q, k, v, o spans with its strides. Allocates the counter
  // slots and the reference first, then q, k, v (with the misalign knob's offset as
  // slack) and o, each to its exact extent so that a fenced buffer faults on the first
  // element past it. tolerance: the dtype's, for the per-row count of the check.
  AttentionRunner(gpu::Session& s, const Problem& p, const std::array<size_t, 4>& extents, double tolerance,
                  int max_batch);
  ~AttentionRunner();
  AttentionRunner(const AttentionRunner&) = delete;
  AttentionRunner& operator=(const AttentionRunner&) = delete;

  // One run per seed, back to back, one wait (gpu::RunSlots::run).
  gpu::BatchResult run(const std::vector<uint64_t>& seeds);

  // Host copies of the last run: inputs and output widened to float over their whole
  // extents (the layout the CPU reference reads), and the device reference ([B,H,S,D]).
  struct Snapshot {
    std::vector<float> q, k, v, o, ref;
  };
  Snapshot snapshot();

  // Per-launch milliseconds of the kernel under test on the last run's inputs.
  std::vector<float> time(int warmup, int iters);

  const PreparedLaunch& launch() const { return launch_; }

 private:
  gpu::Session& s_;
  Problem p_;
  std::array<size_t, 4> extents_;
  double tolerance_;
  std::unique_ptr<gpu::RunSlots> slots_;
  float* ref_ = nullptr;
  size_t ref_elems_ = 0;
  DeviceTensors t_;
  PreparedLaunch launch_;
};

}  // namespace cudadiag::attention

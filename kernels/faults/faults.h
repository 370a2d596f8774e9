#pragma once
// The fault catalog's reproducers: one small kernel each. Plain C++ header; the kernels
// live in the .cu files of this folder.
//
// A FaultRunner prepares a reproducer once (its buffers from the session, so the case's
// allocator decides whether an overrun is silent or faults; the counter slots; static
// inputs), then runs it as often as asked: per run, fresh inputs generated on the
// device from the run's seed, the output poisoned, the reproducer's kernel, and a check
// kernel that recomputes every expected value from the seed and counts mismatches on
// the device. The host reads back one small counter record per run. CUDA errors are
// gpu::CudaError with the API call and the kind of call where they surfaced.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/gpu_runtime.h"
#include "kernels/runtime/run_counters.h"
#include "kernels/runtime/run_slots.h"

namespace cudadiag::faults {

struct FaultParams {
  std::string reproducer;     // one of reproducer_names()
  long long elements = 4096;  // fp32 elements per buffer (16 KiB: a multiple of 16 bytes)
  long long k = 1;            // overrun / underrun distance in elements
  int offset_bytes = 4;       // misaligned-vector-load: byte offset of the 16-byte load
};

// One run's check in words: what was compared and the first element that was wrong.
struct FaultCheck {
  long long checked = 0;
  long long mismatches = 0;
  std::string first_bad;  // "out[12]: got 3.5, expected 1.25" (empty when none)
};

// Names in catalog order.
const std::vector<std::string>& reproducer_names();

struct FaultContext;  // buffers and state of one prepared reproducer (faults.cu)
struct ReproducerOps;

class FaultRunner {
 public:
  // Prepares the reproducer for batches of up to max_batch runs. Throws
  // std::invalid_argument for an unknown reproducer, gpu::CudaError for CUDA errors
  // (out-of-memory and launch-time faults surface in run(), not here).
  FaultRunner(gpu::Session& s, const FaultParams& p, int max_batch);
  ~FaultRunner();
  FaultRunner(const FaultRunner&) = delete;
  FaultRunner& operator=(const FaultRunner&) = delete;

  // One run per seed, back to back, one wait (gpu::RunSlots::run).
  gpu::BatchResult run(const std::vector<uint64_t>& seeds);
  // The device's counters of a run in words (the expected value recomputed on the host).
  FaultCheck describe(const gpu::RunCounters& c, uint64_t seed) const;
  // The host's own check of the last run: its output copied back and compared with
  // expected values computed on the host from the seed. Agrees with the device's
  // counters unless the device check is broken.
  FaultCheck host_check(uint64_t seed);
  // Facts the reproducer reports (registers_per_thread, smem_optin_bytes, ...).
  const std::vector<std::pair<std::string, long long>>& facts() const;

 private:
  std::unique_ptr<FaultContext> ctx_;
  const ReproducerOps* ops_ = nullptr;
};

}  // namespace cudadiag::faults

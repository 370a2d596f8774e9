#pragma once
// Runs in batches with one wait per batch: each run's check writes its RunCounters into
// a device slot, and a copy of that slot to pinned host memory is queued right behind
// the run. When a CUDA error stops the stream, the copies of the runs before it have
// landed and the rest have not, so the host knows exactly which run the error ended,
// even though it waited only once. Plain C++ header.
#include <optional>
#include <vector>

#include "kernels/runtime/gpu_runtime.h"
#include "kernels/runtime/run_counters.h"

namespace cudadiag::gpu {

struct BatchResult {
  std::vector<RunCounters> counters;  // runs 0.. whose counters came back, in order
  std::optional<CudaFailure> error;   // what stopped the batch, during run counters.size()
};

class RunSlots {
 public:
  // Allocates the device slots from the session (buffer "run_counters", so allocate it
  // where the case's allocation order wants it) and their pinned host mirror.
  RunSlots(Session& s, int capacity);
  ~RunSlots();
  RunSlots(const RunSlots&) = delete;
  RunSlots& operator=(const RunSlots&) = delete;

  int capacity() const { return capacity_; }
  RunCounters* device(int i) const { return device_ + i; }

  // Calls enqueue(i) for i in [0, n) (n <= capacity): run i's work, its check into
  // device(i) and nothing that waits. Then waits once and returns what came back.
  template <class Enqueue>
  BatchResult run(int n, Enqueue&& enqueue) {
    mark_pending(n);
    std::optional<CudaFailure> error;
    try {
      for (int i = 0; i < n; ++i) {
        enqueue(i);
        fetch(i);
      }
    } catch (const CudaError& e) {
      error = e.failure();  // a launch error: the runs before it still come back
    }
    return collect(n, std::move(error));
  }

 private:
  void mark_pending(int n);
  void fetch(int i);
  BatchResult collect(int n, std::optional<CudaFailure> error);

  Session& session_;
  int capacity_;
  RunCounters* device_ = nullptr;
  RunCounters* host_ = nullptr;  // pinned
};

}  // namespace cudadiag::gpu

// RunSlots: device counter slots, their pinned host mirror, and the per-run copy.
#include <cuda_runtime_api.h>

#include <stdexcept>

#include "kernels/runtime/run_slots.h"

namespace cudadiag::gpu {

RunSlots::RunSlots(Session& s, int capacity) : session_(s), capacity_(capacity) {
  if (capacity < 1) throw std::invalid_argument("RunSlots: capacity must be at least 1");
  device_ = s.alloc_n<RunCounters>("run_counters", static_cast<size_t>(capacity));
  void* host = nullptr;
  s.check(cudaMallocHost(&host, sizeof(RunCounters) * static_cast<size_t>(capacity)), "cudaMallocHost", "malloc",
          CUDADIAG_HERE);
  host_ = static_cast<RunCounters*>(host);
}

RunSlots::~RunSlots() {
  if (host_) cudaFreeHost(host_);  // the device slots go with the session
}

void RunSlots::mark_pending(int n) {
  if (n > capacity_) throw std::invalid_argument("RunSlots: batch larger than the slots");
  for (int i = 0; i < n; ++i) host_[i] = RunCounters{};  // arrived == 0
}

void RunSlots::fetch(int i) {
  session_.check(cudaMemcpyAsync(host_ + i, device_ + i, sizeof(RunCounters), cudaMemcpyDeviceToHost, nullptr),
                 "cudaMemcpyAsync(run counters)", "memcpy", CUDADIAG_HERE);
}

BatchResult RunSlots::collect(int n, std::optional<CudaFailure> error) {
  try {
    session_.synchronize();
  } catch (const CudaError& e) {
    if (!error) error = e.failure();
  }
  BatchResult r;
  for (int i = 0; i < n && host_[i].arrived; ++i) r.counters.push_back(host_[i]);
  r.error = std::move(error);
  return r;
}

}  // namespace cudadiag::gpu

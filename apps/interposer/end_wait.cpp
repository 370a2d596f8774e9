#include "apps/interposer/end_wait.h"

#include <atomic>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/driver_calls.h"
#include "apps/interposer/process.h"
#include "apps/interposer/ring_writer.h"

namespace cudadiag::interposer {
namespace {
std::atomic<bool> g_waited{false};
}  // namespace

void wait_at_program_end() noexcept {
  // A process that never used CUDA claims no ring here.
  if (!cuda_seen_here() || g_waited.exchange(true)) return;
  RingWriter* ring = recorder();
  if (!ring) return;
  const DriverCalls* d = driver_calls();
  if (!d || !d->ctx_get_current || !d->ctx_synchronize) return;
  CUcontext current = nullptr;
  if (d->ctx_get_current(&current) != CUDA_SUCCESS || current == nullptr) return;
  const CUresult rc = d->ctx_synchronize();
  debug_log("the program's end: its context's work waited for: %d", static_cast<int>(rc));
  // A context already gone (or a driver shut down) holds no work: not a failure.
  if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_INVALID_CONTEXT || rc == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
      rc == CUDA_ERROR_DEINITIALIZED || rc == CUDA_ERROR_NOT_INITIALIZED)
    return;
  ring->set_end_wait_result(static_cast<int>(rc));
}

}  // namespace cudadiag::interposer

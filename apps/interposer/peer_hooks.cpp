// cuCtxEnablePeerAccess and cuCtxDisablePeerAccess (cudaDeviceEnablePeerAccess and
// cudaDeviceDisablePeerAccess call them): the driver answers; what it accepted is noted
// (peer_access.h) and the fenced buffers that already live on the peer's device follow
// it: read-write access granted to the enabling device, or taken away, as the driver's
// own peer access does for cuMemAlloc's memory.
#include <cudaTypedefs.h>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/driver_calls.h"
#include "apps/interposer/entry_points.h"
#include "apps/interposer/exported_hooks.h"
#include "apps/interposer/fence_memory.h"
#include "apps/interposer/peer_access.h"
#include "apps/interposer/process.h"
#include "apps/interposer/recycle_bin.h"
#include "apps/interposer/tracked_ranges.h"

using namespace cudadiag::interposer;

namespace {

constexpr std::size_t kBatch = 32;

// Grants or takes away `accessor`'s access to every live fenced buffer of `owner`. The
// buffers kept mapped for recycling carry the access they were mapped with: unmapped.
void follow_peer_access(const DriverCalls& d, int accessor, int owner, bool enabled) {
  recycle_bin().drain(d, settings().reuse_bytes, recorder());
  Tracked batch[kBatch];
  std::uint64_t after = 0;
  std::size_t changed = 0, failed = 0;
  for (;;) {
    const std::size_t n = tracked_ranges().fenced_on(owner, after, batch, kBatch);
    for (std::size_t i = 0; i < n; ++i) {
      // A buffer freed meanwhile is unmapped: the driver refuses, nothing to change.
      if (set_peer_mapping_access(d, batch[i].mapped_begin, batch[i].mapped_size, accessor, enabled) == CUDA_SUCCESS)
        ++changed;
      else
        ++failed;
      after = batch[i].address;
    }
    if (n < kBatch) break;
  }
  debug_log("peer access from device %d to device %d %s: %zu fenced buffers changed, %zu refused", accessor, owner,
            enabled ? "enabled" : "disabled", changed, failed);
}

// After the driver's answer: the state it leaves, followed by the fenced buffers.
void note_answer(CUcontext peer, bool enable, CUresult rc) {
  const bool now_enabled = enable ? rc == CUDA_SUCCESS || rc == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
                                  : !(rc == CUDA_SUCCESS || rc == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED && rc != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
    return;  // refused: nothing changed
  const DriverCalls* d = driver_calls();
  if (!d) return;
  const int accessor = current_place().device;
  const int owner = device_of_context(*d, peer);
  if (peer_access_enabled(accessor, owner) == now_enabled) return;
  if (!set_peer_access(accessor, owner, now_enabled)) {
    debug_log("peer access from device %d to device %d: not followed (ordinals out of range)", accessor, owner);
    return;
  }
  follow_peer_access(*d, accessor, owner, now_enabled);
}

}  // namespace

CUresult hook_cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuCtxEnablePeerAccess_v4000>(Entry::ctx_enable_peer_access);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(peerContext, Flags);
  note_answer(peerContext, true, rc);
  return rc;
}

CUresult hook_cuCtxDisablePeerAccess(CUcontext peerContext) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuCtxDisablePeerAccess_v4000>(Entry::ctx_disable_peer_access);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(peerContext);
  note_answer(peerContext, false, rc);
  return rc;
}

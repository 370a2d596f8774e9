#pragma once
// Which devices the program let use which devices' memory: cuCtxEnablePeerAccess (what
// cudaDeviceEnablePeerAccess calls) made in a context of device A naming a context of
// device B lets A's kernels reach B's memory, until cuCtxDisablePeerAccess. Memory from
// cuMemAlloc follows that by itself; the fence's VMM memory is reachable only where
// cuMemSetAccess granted it, so a fenced buffer is granted to its own device and to the
// peers enabled here, no more (a kernel that reads a peer's buffer without the program
// enabling access faults under the fence as it does natively). Lock-free; a device
// ordinal past kMaxPeerDevices is never a peer.
#include <cstdint>

namespace cudadiag::interposer {

inline constexpr int kMaxPeerDevices = 64;

// Whether kernels on `accessor` may use memory of `owner` (false for accessor == owner:
// a device's own memory needs no peer access).
bool peer_access_enabled(int accessor, int owner) noexcept;
// Records what the driver accepted; false for ordinals out of range.
bool set_peer_access(int accessor, int owner, bool enabled) noexcept;
// Counts the changes: a buffer placed while one was made (its access list read before it,
// its record inserted after the change went through the buffers) is granted again.
std::uint64_t peer_access_generation() noexcept;

}  // namespace cudadiag::interposer

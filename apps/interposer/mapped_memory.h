#pragma once
// Device memory the program maps itself (cuMemMap: NCCL's buffers, PyTorch's expandable
// segments) and memory it imports over CUDA IPC through the driver's own handle (the
// exporter's buffer was not fenced): never fenced, but recorded in the ring (address
// range, size, device, the call that made it, why it is not fenced) and tracked, so that
// a fault in it is named and a launch passed it says so.
#include <cstdint>

#include "fence/ring_format.h"

namespace cudadiag::interposer {

void note_mapping(ring::Api api, ring::Unfenced why, std::uint64_t address, std::uint64_t bytes) noexcept;

// [address, address + bytes) was unmapped (cuMemUnmap) or its import closed: the mappings
// inside it are recorded as freed by `api`.
void note_unmapping(ring::Api api, std::uint64_t address, std::uint64_t bytes) noexcept;

}  // namespace cudadiag::interposer

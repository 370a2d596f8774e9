#pragma once
// Device memory placed against an unmapped guard with the driver's VMM calls
// (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), placed by the guard
// arithmetic shared with the bundled fence allocator (lib/fence/guard_layout.h).
#include <cuda.h>

#include <cstdint>

#include "fence/guard_layout.h"
#include "kernels/interposer/driver_calls.h"
#include "program/ring_format.h"

namespace cudadiag::interposer {

struct FencedMemory {
  fence::Layout layout;
  std::uint64_t handle = 0;  // CUmemGenericAllocationHandle
  std::uint64_t granularity = 0;
};

// The VMM step that failed and how.
struct FenceFailure {
  ring::VmmCall call = ring::VmmCall::none;
  CUresult result = CUDA_SUCCESS;
};

// Maps `bytes` on `device` flush against a guard; on failure nothing stays allocated.
// The pointer is aligned to `align` (at most a granule). Access is granted to the device
// and to every device that can access it as a peer (as with cuMemAlloc's memory).
bool map_fenced(const DriverCalls& d, int device, std::uint64_t bytes, std::uint64_t align, fence::Side side,
                FencedMemory& out, FenceFailure& why) noexcept;

// Unmaps a fenced buffer and releases its memory; the address range stays reserved.
CUresult unmap_fenced(const DriverCalls& d, std::uint64_t mapped_begin, std::uint64_t mapped_size,
                      std::uint64_t handle) noexcept;

}  // namespace cudadiag::interposer

#pragma once
// Records every encoded TMA descriptor (cuTensorMapEncodeTiled, Im2col, Im2colWide) with
// where its base lies: in which allocation, and how many bytes are mapped from the base
// on. TMA's out-of-bounds handling in its 128 KiB address mode may touch that far from
// the base whatever the tensor's extent, so a base less than that before a fence's guard
// makes a fault possibly the fence's (ring::kTmaNearGuard, counted in tma_near_guard).
#include <cuda.h>

#include <cstdint>

#include "fence/ring_format.h"

namespace cudadiag::interposer {

struct TmaEncode {
  ring::Api api = ring::Api::unknown;
  std::uint64_t address = 0;                // globalAddress
  std::uint32_t rank = 0;
  std::uint32_t data_type = 0;              // CUtensorMapDataType
  const cuuint64_t* dims = nullptr;         // globalDim[rank]
  const cuuint64_t* strides = nullptr;      // globalStrides[rank - 1], bytes
  std::uint32_t interleave = 0;
  std::uint32_t swizzle = 0;
  std::uint32_t oob_fill = 0;
};

// After the driver's encode answered `result`.
void record_tma_encode(const TmaEncode& e, CUresult result) noexcept;

}  // namespace cudadiag::interposer

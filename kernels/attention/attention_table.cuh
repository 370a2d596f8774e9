#pragma once
// The compiled (BLOCK_N, NUM_WARPS, slabs at once) grid of one (dtype, head dim): a
// switch per template parameter, so that each instantiation file stays one line.
#include "kernels/attention/attention_kernel.cuh"

namespace cudadiag::attention::detail {

static_assert(kBlockNs[0] == 16 && kBlockNs[1] == 32 && kBlockNs[2] == 64 && kBlockNs[3] == 128,
              "the BLOCK_N switch below must list kBlockNs");
static_assert(kWarpCounts[0] == 1 && kWarpCounts[1] == 2 && kWarpCounts[2] == 4 &&
                  kWarpCounts[3] == 8,
              "the NUM_WARPS switch below must list kWarpCounts");

template <typename T, int D, int BN>
const void* pick_warps(int warps, int slabs) {
  if (slabs == 2) {
    // Two-slab kernels exist only for kTwoSlabWarps and kTwoSlabBlockNs.
    if constexpr (contains(kTwoSlabBlockNs, BN)) {
      static_assert(kTwoSlabWarps == 4, "the two-slab instantiation below must use kTwoSlabWarps");
      if (warps == kTwoSlabWarps) return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 4, 2>);
    }
    return nullptr;
  }
  switch (warps) {
    case 1: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 1, 1>);
    case 2: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 2, 1>);
    case 4: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 4, 1>);
    case 8: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 8, 1>);
    default: return nullptr;
  }
}

template <typename T, int D>
const void* pick_kernel(int block_n, int warps, int slabs) {
  switch (block_n) {
    case 16: return pick_warps<T, D, 16>(warps, slabs);
    case 32: return pick_warps<T, D, 32>(warps, slabs);
    case 64: return pick_warps<T, D, 64>(warps, slabs);
    case 128: return pick_warps<T, D, 128>(warps, slabs);
    default: return nullptr;
  }
}

}  // namespace cudadiag::attention::detail

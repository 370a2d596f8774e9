#pragma once
// The compiled (BLOCK_N, NUM_WARPS) grid of one (dtype, head dim): a switch per
// template parameter, so that each instantiation file stays one line.
#include "kernels/attention/attention_kernel.cuh"

namespace cudadiag::attention::detail {

static_assert(kBlockNs[0] == 16 && kBlockNs[1] == 32 && kBlockNs[2] == 64 && kBlockNs[3] == 128,
              "the BLOCK_N switch below must list kBlockNs");
static_assert(kWarpCounts[0] == 1 && kWarpCounts[1] == 2 && kWarpCounts[2] == 4 &&
                  kWarpCounts[3] == 8,
              "the NUM_WARPS switch below must list kWarpCounts");

template <typename T, int D, int BN>
const void* pick_warps(int warps) {
  switch (warps) {
    case 1: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 1>);
    case 2: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 2>);
    case 4: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 4>);
    case 8: return reinterpret_cast<const void*>(&device::fa2_fwd_kernel<T, D, BN, 8>);
    default: return nullptr;
  }
}

template <typename T, int D>
const void* pick_kernel(int block_n, int warps) {
  switch (block_n) {
    case 16: return pick_warps<T, D, 16>(warps);
    case 32: return pick_warps<T, D, 32>(warps);
    case 64: return pick_warps<T, D, 64>(warps);
    case 128: return pick_warps<T, D, 128>(warps);
    default: return nullptr;
  }
}

}  // namespace cudadiag::attention::detail

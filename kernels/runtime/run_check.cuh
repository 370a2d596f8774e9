#pragma once
// Device helpers of the check kernels: warp reductions and the atomics that fold one
// thread's findings into a run's RunCounters. Included by .cu files only.
#include <cstdint>

#include "kernels/runtime/run_counters.h"

namespace cudadiag::gpu::device {

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ unsigned long long warp_min(unsigned long long v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const unsigned long long w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w < v ? w : v;
  }
  return v;
}

// (index, bits) packed so that the smallest index wins an atomicMin with its bits.
__device__ __forceinline__ unsigned long long pack_bad(unsigned long long index, uint32_t bits) {
  const unsigned long long i = index < 0xffffffffull ? index : 0xfffffffeull;
  return (i << 32) | bits;
}

// Folds one warp's counts into c (one atomic per non-zero field, lane 0 only). Every
// lane of the warp must call it (full-warp shuffles).
__device__ __forceinline__ void add_counts(RunCounters* c, unsigned long long checked,
                                           unsigned long long bad, unsigned long long first_bad) {
  checked = warp_sum(checked);
  bad = warp_sum(bad);
  first_bad = warp_min(first_bad);
  if ((threadIdx.x & 31) == 0) {
    if (checked) atomicAdd(&c->checked, checked);
    if (bad) atomicAdd(&c->mismatches, bad);
    if (first_bad != kNoIndex) atomicMin(&c->first_bad, first_bad);
  }
}

}  // namespace cudadiag::gpu::device

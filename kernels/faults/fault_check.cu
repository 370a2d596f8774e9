// The device check of the fault catalog: every compared output element against the
// value the reproducer should have written, recomputed from the run's seed (not read
// from the input buffer, which a buggy kernel may have touched).
#include <algorithm>

#include "kernels/faults/fault_support.h"
#include "kernels/runtime/run_check.cuh"

namespace cudadiag::faults {
namespace {

__global__ void check_transform_kernel(const float* out, long long first, long long last, long long shift,
                                       uint64_t seed, gpu::RunCounters* c) {
  unsigned long long checked = 0, bad = 0, first_bad = gpu::kNoIndex;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = first + blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < last; i += step) {
    const uint32_t want = __float_as_uint(transform(fault_input(seed, i + shift)));
    const uint32_t got = __float_as_uint(out[i]);
    ++checked;
    if (got != want) {
      ++bad;
      first_bad = std::min(first_bad, gpu::device::pack_bad(static_cast<unsigned long long>(i), got));
    }
  }
  gpu::device::add_counts(c, checked, bad, first_bad);
}

}  // namespace

void launch_check_transform(FaultContext& c, uint64_t seed, gpu::RunCounters* slot) {
  constexpr unsigned kMaxBlocks = 1024;
  const unsigned blocks = std::max(1u, std::min(kMaxBlocks, blocks_for(c.last - c.first)));
  check_transform_kernel<<<blocks, kThreads>>>(c.out, c.first, c.last, c.shift, seed, slot);
  CD_CHECK_LAUNCH(c.s);
}

}  // namespace cudadiag::faults

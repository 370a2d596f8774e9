// Instantiations of the attention kernel for fp16, head dim 128 (one file per pair so
// that the build compiles them in parallel).
#include "kernels/attention/attention_kernels.h"
#include "kernels/attention/attention_table.cuh"

namespace cudadiag::attention::detail {

const void* kernel_fp16_d128(int block_n, int warps, int slabs) {
  return pick_kernel<__half, 128>(block_n, warps, slabs);
}

}  // namespace cudadiag::attention::detail

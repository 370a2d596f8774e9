// Instantiations of the attention kernel for bf16, head dim 64 (one file per pair so
// that the build compiles them in parallel).
#include "kernels/attention/attention_kernels.h"
#include "kernels/attention/attention_table.cuh"

namespace cudadiag::attention::detail {

const void* kernel_bf16_d64(int block_n, int warps, int slabs) {
  return pick_kernel<__nv_bfloat16, 64>(block_n, warps, slabs);
}

}  // namespace cudadiag::attention::detail

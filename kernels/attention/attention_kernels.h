#pragma once
// One function per (dtype, head dim) instantiation file: the kernel for
// (block_n, warps, slabs at once), or nullptr when that triple is not compiled.
namespace cudadiag::attention::detail {

const void* kernel_fp16_d64(int block_n, int warps, int slabs);
const void* kernel_fp16_d128(int block_n, int warps, int slabs);
const void* kernel_bf16_d64(int block_n, int warps, int slabs);
const void* kernel_bf16_d128(int block_n, int warps, int slabs);
// The wgmma engine (sm90a/attention_wgmma.cu, sm_90a machine code only): the kernel for
// block_n, or nullptr when not compiled.
const void* kernel_wgmma(bool bf16, int block_n);

}  // namespace cudadiag::attention::detail

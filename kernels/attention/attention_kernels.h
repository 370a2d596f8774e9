#pragma once
// One function per (dtype, head dim) instantiation file: the kernel for
// (block_n, warps), or nullptr when that pair is not compiled.
namespace cudadiag::attention::detail {

const void* kernel_fp16_d64(int block_n, int warps);
const void* kernel_fp16_d128(int block_n, int warps);
const void* kernel_bf16_d64(int block_n, int warps);
const void* kernel_bf16_d128(int block_n, int warps);

}  // namespace cudadiag::attention::detail

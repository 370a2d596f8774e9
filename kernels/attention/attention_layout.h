#pragma once
// Facts about the bundled attention kernel that the host must know without CUDA:
// the compiled tile set and the exact shared-memory layout. Plain C++ (no CUDA
// headers), shared by the kernels and by lib/cases/attention_config.cpp so that the
// host-side validation and the kernel can never disagree.
#include <array>
#include <cstddef>

namespace cudadiag::attention {

// Tile parameters compiled into the binary. BLOCK_M is a runtime value of the
// kernel (it only sizes the Q tile and the number of 16-row slabs); BLOCK_N, the
// warp count, the head dim and the dtype are template parameters.
inline constexpr std::array<int, 5> kBlockMs = {16, 32, 64, 80, 128};
inline constexpr std::array<int, 4> kBlockNs = {16, 32, 64, 128};
inline constexpr std::array<int, 4> kWarpCounts = {1, 2, 4, 8};
inline constexpr std::array<int, 2> kHeadDims = {64, 128};

// Each warp computes 16-row slabs of the BLOCK_M query rows (mma.m16n8k16).
inline constexpr int kSlabRows = 16;
// cp.async moves 16 bytes: every global row start must be 16-byte aligned.
inline constexpr int kVectorBytes = 16;
// Shared-memory rows are padded by one 16-byte vector so that the 8 rows an
// ldmatrix reads fall in different banks.
inline constexpr int kRowPadElems = 8;
// K and V tiles are double-buffered (cp.async of tile j+1 overlaps compute of j).
inline constexpr int kStages = 2;
// Both supported dtypes (fp16, bf16) are 2 bytes wide.
inline constexpr int kElemBytes = 2;

constexpr int smem_row_elems(int head_dim) { return head_dim + kRowPadElems; }

// Layout, in rows of smem_row_elems(head_dim) elements:
//   Q [block_m] | K stage 0 [block_n] | K stage 1 [block_n] | V stage 0 | V stage 1
constexpr size_t smem_q_offset_rows() { return 0; }
constexpr size_t smem_k_offset_rows(int block_m, int /*block_n*/) { return size_t(block_m); }
constexpr size_t smem_v_offset_rows(int block_m, int block_n) {
  return size_t(block_m) + size_t(kStages) * size_t(block_n);
}
constexpr size_t smem_total_rows(int block_m, int block_n) {
  return size_t(block_m) + 2 * size_t(kStages) * size_t(block_n);
}
constexpr size_t smem_bytes(int block_m, int block_n, int head_dim) {
  return smem_total_rows(block_m, block_n) * size_t(smem_row_elems(head_dim)) * kElemBytes;
}

// Slabs of one CTA and how many slab rounds each warp runs.
constexpr int slabs_per_block(int block_m) { return block_m / kSlabRows; }
constexpr int slabs_per_warp(int block_m, int warps) {
  return (slabs_per_block(block_m) + warps - 1) / warps;
}

template <size_t N>
constexpr bool contains(const std::array<int, N>& set, int v) {
  for (int x : set)
    if (x == v) return true;
  return false;
}

}  // namespace cudadiag::attention

#pragma once
// Facts about the bundled attention kernel that the host must know without CUDA:
// the compiled tile set and the exact shared-memory layout. Plain C++ (no CUDA
// headers), shared by the kernels and by lib/attention/attention_config.cpp so that the
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

template <size_t N>
constexpr bool contains(const std::array<int, N>& set, int v) {
  for (int x : set)
    if (x == v) return true;
  return false;
}

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

// The drop-barrier knob's race: in every run each CTA draws from the run's seed whether
// its warps 1.. start late (probability race_rate), and if so they wait race_window
// cycles before their first copies. Measured on an H100 (driver 580.159.04) at the seed
// tile (64, 64, 4), S=512 (scripts/device/hunt-probe.sh): these defaults fail 327 of 1000
// runs (95% Wilson interval 0.299-0.357); with every CTA late (rate 1) 1000 of 1000 from
// a 2000-cycle window up. See kernels/attention/TUNING.md.
inline constexpr int kDefaultRaceWindowCycles = 20000;
inline constexpr double kDefaultRaceRate = 0.05;
inline constexpr int kMaxRaceWindowCycles = 10000000;  // 10M cycles: ~5 ms per run

// Two slabs at once: where a kernel for it is compiled (4 warps, these BLOCK_Ns) and
// BLOCK_M is exactly two slabs per warp per round, each warp computes its two 16-row
// slabs together, so every K and V fragment it loads from shared memory feeds two mma
// instead of one (the FlashAttention-2 tiling: 128 x BLOCK_N with 4 warps of 32 rows).
inline constexpr std::array<int, 2> kTwoSlabBlockNs = {32, 64};
inline constexpr int kTwoSlabWarps = 4;
constexpr int slabs_at_once(int block_m, int block_n, int warps) {
  return warps == kTwoSlabWarps && contains(kTwoSlabBlockNs, block_n) && block_m % (2 * kSlabRows * warps) == 0
             ? 2
             : 1;
}

// mma: the mma.sync kernel (sm_80 and later, every compiled tile); wgmma: the sm_90a
// engine (kernels/attention/sm90a: head dim 128, BLOCK_M 128, 8 warps, BLOCK_N 64/128).
enum class Engine { mma, wgmma };

// The element type of Q, K, V and O.
enum class DType { fp16, bf16 };

// The wgmma engine (sm_90a, kernels/attention/sm90a): two warpgroups of 64 query rows,
// head dim 128, Q/K/V tiles in 128-byte-swizzled shared memory read by wgmma, P passed
// to the P V product from registers. One tile shape per BLOCK_N.
inline constexpr int kWgmmaBlockM = 128;
inline constexpr int kWgmmaWarps = 8;
inline constexpr int kWgmmaHeadDim = 128;
inline constexpr std::array<int, 2> kWgmmaBlockNs = {64, 128};
// Q [BM x D] and two stages of K and V [BN x D], 2-byte elements, plus 1 KiB to align
// the swizzle atoms to 1024 bytes.
constexpr size_t wgmma_smem_bytes(int block_n) {
  return 1024 + size_t(kWgmmaBlockM) * kWgmmaHeadDim * kElemBytes +
         2 * size_t(kStages) * size_t(block_n) * kWgmmaHeadDim * kElemBytes;
}

// Slabs of one CTA and how many slab rounds each warp runs.
constexpr int slabs_per_block(int block_m) { return block_m / kSlabRows; }
constexpr int slabs_per_warp(int block_m, int warps) {
  return (slabs_per_block(block_m) + warps - 1) / warps;
}


}  // namespace cudadiag::attention

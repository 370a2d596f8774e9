// The wgmma attention engine (sm_90a only; built as its own library). Per CTA two
// warpgroups of 64 query rows; per K/V tile: S = Q K^T with wgmma reading Q and K from
// 128-byte-swizzled shared memory, the online softmax of the mma.sync kernel on the
// accumulator fragments (same fragment layout per warp), then O += P V with P from
// registers and V read transposed (MN-major) from shared memory. K/V double-buffered
// with cp.async, one barrier per tile. Verified by the same device reference and
// checks as the mma.sync kernel.
#include "kernels/attention/attention_kernel.cuh"
#include "kernels/attention/attention_kernels.h"
#include "kernels/attention/sm90a/wgmma_ops.cuh"

namespace cudadiag::attention::device {
namespace {

constexpr int kD = kWgmmaHeadDim;
constexpr int kBM = kWgmmaBlockM;
constexpr int kThreads = kWgmmaWarps * 32;
constexpr int kRowBytes = kD * kElemBytes;  // 256: two 128-byte panels per row
static_assert(kD == 128 && kBM == 128 && kWgmmaWarps == 8, "the engine's layout below assumes these");

// Byte offset of 16-byte chunk c (0..15) of row r in a [2 panels][rows][128 B] tile with
// the 128-byte swizzle (chunk index XOR row mod 8 inside each 1024-byte atom).
__device__ __forceinline__ uint32_t sw128(int rows, int r, int c) {
  return static_cast<uint32_t>((c >> 3) * rows * 128 + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}

// Rows >= seq_len are zero-filled.
template <typename T>
__device__ __forceinline__ void load_sw128(unsigned char* dst, const T* src, long long row_stride, int row0, int rows,
                                           int seq_len) {
  const int total = rows * 16;
  for (int c = threadIdx.x; c < total; c += kThreads) {
    const int r = c >> 4, cc = c & 15, gr = row0 + r;
    unsigned char* d = dst + sw128(rows, r, cc);
    if (gr < seq_len) {
      cp_async16(d, src + gr * row_stride + cc * 8);
    } else {
      *reinterpret_cast<uint4*>(d) = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}

// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride
// byte offsets (each in 16-byte units), layout type 1 in bits 62-63.
__device__ __forceinline__ uint64_t desc_sw128(const void* p, uint32_t lbo, uint32_t sbo) {
  const uint32_t a = smem_addr(p);
  return static_cast<uint64_t>((a & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

template <typename T, int BN>
__device__ __forceinline__ void qk(float (&s)[BN / 2], uint64_t da, uint64_t db) {
  if constexpr (std::is_same_v<T, __half>) {
    if constexpr (BN == 64) wgmma::wgmma_ss_f16_n64(s, da, db);
    else wgmma::wgmma_ss_f16_n128(s, da, db);
  } else {
    if constexpr (BN == 64) wgmma::wgmma_ss_bf16_n64(s, da, db);
    else wgmma::wgmma_ss_bf16_n128(s, da, db);
  }
}

template <typename T>
__device__ __forceinline__ void pv(float (&o)[64], const uint32_t (&p)[4], uint64_t db) {
  if constexpr (std::is_same_v<T, __half>) wgmma::wgmma_rs_f16_n128(o, p, db);
  else wgmma::wgmma_rs_bf16_n128(o, p, db);
}

template <typename T, int BN>
__global__ void __launch_bounds__(kThreads, BN == 64 ? 2 : 1) fa_wgmma_kernel(const KernelArgs a) {
  constexpr int NB = BN / 8;
  constexpr int kTileBytes = BN * kRowBytes;
  using Mma = MmaOp<T>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  unsigned char* sQ = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  unsigned char* sK = sQ + kBM * kRowBytes;
  unsigned char* sV = sK + 2 * kTileBytes;

  const int S = a.seq_len;
  const int mblock = a.causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  const int m0 = mblock * kBM;
  const int h = blockIdx.y, b = blockIdx.z;
  const int wg = threadIdx.x / 128;
  const int warp = (threadIdx.x / 32) % 4;  // inside the warpgroup
  const int lane = threadIdx.x % 32, g = lane / 4, tig = lane % 4;
  const T* qg = static_cast<const T*>(a.q) + b * a.q_sb + h * a.q_sh;
  const T* kg = static_cast<const T*>(a.k) + b * a.k_sb + h * a.k_sh;
  const T* vg = static_cast<const T*>(a.v) + b * a.v_sb + h * a.v_sh;
  T* og = static_cast<T*>(a.o) + b * a.o_sb + h * a.o_sh;
  const float sl2 = a.scale_log2;

  load_sw128<T>(sQ, qg, a.q_ss, m0, kBM, S);
  const int last_row = min(S, m0 + kBM) - 1;
  const int kv_end = a.causal ? last_row + 1 : S;
  const int n_tiles = (kv_end + BN - 1) / BN;
  load_sw128<T>(sK, kg, a.k_ss, 0, BN, S);
  load_sw128<T>(sV, vg, a.v_ss, 0, BN, S);
  cp_async_commit();

  const int wg_row0 = m0 + wg * 64;
  const int warp_row0 = wg_row0 + warp * 16;
  const bool active = wg_row0 < S;  // warpgroup-uniform: wgmma is issued by all 128 threads
  float o[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

  for (int j = 0; j < n_tiles; ++j) {
    const int stage = j & 1;
    cp_async_wait<0>();
    wgmma::fence_proxy_async();  // cp.async and zero-fill stores, then read by wgmma
    __syncthreads();             // tile j everywhere; every warpgroup done with tile j-1
    if (j + 1 < n_tiles) {
      const int ns = (j + 1) & 1;
      load_sw128<T>(sK + ns * kTileBytes, kg, a.k_ss, (j + 1) * BN, BN, S);
      load_sw128<T>(sV + ns * kTileBytes, vg, a.v_ss, (j + 1) * BN, BN, S);
      cp_async_commit();
    }
    const int n0 = j * BN;
    if (!active || (a.causal && n0 > wg_row0 + 63)) continue;  // warpgroup-uniform
    const unsigned char* tK = sK + stage * kTileBytes;
    const unsigned char* tV = sV + stage * kTileBytes;

    float s[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) s[i] = 0.f;
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const uint64_t da = desc_sw128(sQ + (kk >> 2) * kBM * 128 + wg * 64 * 128 + (kk & 3) * 32, 16, 1024);
      const uint64_t db = desc_sw128(tK + (kk >> 2) * BN * 128 + (kk & 3) * 32, 16, 1024);
      qk<T, BN>(s, da, db);
    }
    wgmma::commit();
    wgmma::wait_all();

    // Fragment element 4*nb+e: row warp_row0 + g (+8 for e >= 2), column n0 + 8nb + 2tig + (e&1).
    const bool tail = n0 + BN > S;
    const bool diag = a.causal && n0 + BN - 1 > warp_row0;
    if (tail || diag) {
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = n0 + nb * 8 + tig * 2 + (e & 1);
          const int row = warp_row0 + g + (e < 2 ? 0 : 8);
          if ((tail && col >= S) || (diag && col > row)) s[4 * nb + e] = -INFINITY;
        }
    }
    float alpha[2], msc[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float tmax = -INFINITY;
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) tmax = fmaxf(tmax, fmaxf(s[4 * nb + 2 * r], s[4 * nb + 2 * r + 1]));
      tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
      tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 2));
      const float m_new = fmaxf(row_max[r], tmax);
      const float m_use = (m_new == -INFINITY) ? 0.f : m_new;
      alpha[r] = ex2((row_max[r] - m_use) * sl2);
      row_max[r] = m_new;
      msc[r] = m_use * sl2;
    }
    float part[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) {
      const float p = ex2(fmaf(s[i], sl2, -msc[(i & 3) / 2]));
      s[i] = p;
      part[(i & 3) / 2] += p;
    }
    row_sum[0] = row_sum[0] * alpha[0] + part[0];
    row_sum[1] = row_sum[1] * alpha[1] + part[1];
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] *= alpha[(i & 3) / 2];

    uint32_t pf[BN / 16][4];
#pragma unroll
    for (int kc = 0; kc < BN / 16; ++kc) {
      pf[kc][0] = Mma::pack(s[8 * kc + 0], s[8 * kc + 1]);
      pf[kc][1] = Mma::pack(s[8 * kc + 2], s[8 * kc + 3]);
      pf[kc][2] = Mma::pack(s[8 * kc + 4], s[8 * kc + 5]);
      pf[kc][3] = Mma::pack(s[8 * kc + 6], s[8 * kc + 7]);
    }
    wgmma::fence();
#pragma unroll
    for (int kc = 0; kc < BN / 16; ++kc) {
      // V [16 keys x 128] starting at key 16kc: 2 groups of 8 key rows (1024 B apart),
      // the two 64-column panels BN*128 bytes apart.
      pv<T>(o, pf[kc], desc_sw128(tV + kc * 2048, BN * 128, 1024));
    }
    wgmma::commit();
    wgmma::wait_all();
  }

  if (active) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 1);
      row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 2);
    }
    const int row_lo = warp_row0 + g, row_hi = row_lo + 8;
    const float inv_lo = 1.f / row_sum[0], inv_hi = 1.f / row_sum[1];
#pragma unroll
    for (int ob = 0; ob < 16; ++ob) {
      const int col = ob * 8 + tig * 2;
      if (row_lo < S)
        *reinterpret_cast<uint32_t*>(og + row_lo * a.o_ss + col) = Mma::pack(o[4 * ob] * inv_lo, o[4 * ob + 1] * inv_lo);
      if (row_hi < S)
        *reinterpret_cast<uint32_t*>(og + row_hi * a.o_ss + col) =
            Mma::pack(o[4 * ob + 2] * inv_hi, o[4 * ob + 3] * inv_hi);
    }
  }
}

}  // namespace
}  // namespace cudadiag::attention::device

namespace cudadiag::attention::detail {

const void* kernel_wgmma(bool bf16, int block_n) {
  static_assert(kWgmmaBlockNs[0] == 64 && kWgmmaBlockNs[1] == 128, "the switch below must list kWgmmaBlockNs");
  switch (block_n) {
    case 64:
      return bf16 ? reinterpret_cast<const void*>(&device::fa_wgmma_kernel<__nv_bfloat16, 64>)
                  : reinterpret_cast<const void*>(&device::fa_wgmma_kernel<__half, 64>);
    case 128:
      return bf16 ? reinterpret_cast<const void*>(&device::fa_wgmma_kernel<__nv_bfloat16, 128>)
                  : reinterpret_cast<const void*>(&device::fa_wgmma_kernel<__half, 128>);
    default: return nullptr;
  }
}

}  // namespace cudadiag::attention::detail

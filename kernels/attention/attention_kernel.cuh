#pragma once
// FlashAttention-2 style forward kernel: one CTA owns BLOCK_M query rows of one
// (batch, head); each warp computes 16-row slabs with mma.sync m16n8k16 (fp32
// accumulate), streaming K/V tiles of BLOCK_N rows through a two-stage cp.async
// pipeline with an online softmax. Included only by the attention .cu files.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/attention/attention_layout.h"

namespace cudadiag::attention::device {

struct KernelArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  long long q_sb, q_sh, q_ss;
  long long k_sb, k_sh, k_ss;
  long long v_sb, v_sh, v_ss;
  long long o_sb, o_sh, o_ss;
  int seq_len;
  int block_m;
  float scale_log2;  // softmax scale * log2(e): scores go through exp2f
  int causal;
  int no_tail_mask;
  int drop_barrier;
  int smem_overflow;
};

template <typename T>
struct MmaOp;

template <>
struct MmaOp<__half> {
  __device__ static void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ static uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
};

template <>
struct MmaOp<__nv_bfloat16> {
  __device__ static void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy. The global address must be 16-byte aligned; it is
// never rounded here, so a misaligned base faults (cudaErrorMisalignedAddress).
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// drop-barrier knob: warps other than warp 0 wait this many clock cycles before issuing
// their copies of a freshly started tile (Q and the first K/V tile of every slab round).
// Without the barrier after cp.async.wait_group, warp 0 then reads rows whose copies the
// other warps have not even issued; without the lag the window of the race is a few
// cycles and an H100 shows 0 failures in 200 runs. 2000 cycles (~1 us) exceed the
// global-to-shared latency (L2 hit ~300, DRAM ~800 cycles), so warp 0's reads land in
// the window. The lag runs only when the knob is on: a kernel-argument (uniform) branch.
inline constexpr long long kDropBarrierLagCycles = 2000;

__device__ __forceinline__ void lag_cycles(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// Copies `rows` rows of D elements starting at global row `row0` into shared rows
// starting at `dst` (pitch P). Rows >= seq_len are zero-filled unless `unmasked`;
// `row_shift` moves every destination row down (the smem-overflow knob).
template <typename T, int D, int THREADS>
__device__ __forceinline__ void load_tile(T* dst, const T* src, long long row_stride, int row0,
                                          int rows, int seq_len, bool unmasked, int row_shift) {
  constexpr int P = smem_row_elems(D);
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  const int total = rows * kChunks;
  for (int c = threadIdx.x; c < total; c += THREADS) {
    const int r = c / kChunks;
    const int cc = c % kChunks;
    const int gr = row0 + r;
    T* d = dst + (r + row_shift) * P + cc * 8;
    if (gr < seq_len || unmasked) {
      cp_async16(d, src + gr * row_stride + cc * 8);
    } else {
      *reinterpret_cast<uint4*>(d) = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}

template <typename T, int D, int BN, int NW>
__global__ void __launch_bounds__(NW * 32) fa2_fwd_kernel(const KernelArgs a) {
  constexpr int P = smem_row_elems(D);
  constexpr int THREADS = NW * 32;
  constexpr int KD = D / 16;   // k-steps of Q K^T
  constexpr int NB = BN / 8;   // n8 blocks of the score tile
  constexpr int OB = D / 8;    // n8 blocks of the output slab
  using Mma = MmaOp<T>;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  const int BM = a.block_m;
  T* sK = sQ + smem_k_offset_rows(BM, BN) * P;
  T* sV = sQ + smem_v_offset_rows(BM, BN) * P;

  const int S = a.seq_len;
  const int m0 = blockIdx.x * BM;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;    // row inside an 8-row group of a fragment
  const int tig = lane % 4;  // thread in group: column pair

  const T* qg = static_cast<const T*>(a.q) + b * a.q_sb + h * a.q_sh;
  const T* kg = static_cast<const T*>(a.k) + b * a.k_sb + h * a.k_sh;
  const T* vg = static_cast<const T*>(a.v) + b * a.v_sb + h * a.v_sh;
  T* og = static_cast<T*>(a.o) + b * a.o_sb + h * a.o_sh;

  const bool unmasked = a.no_tail_mask != 0;
  const int v_shift = a.smem_overflow ? 1 : 0;

  // Lagging copy issuers for the drop-barrier knob (see kDropBarrierLagCycles).
  const bool lag = a.drop_barrier != 0 && warp != 0;
  if (lag) lag_cycles(kDropBarrierLagCycles);

  load_tile<T, D, THREADS>(sQ, qg, a.q_ss, m0, BM, S, false, 0);
  cp_async_commit();

  const int n_slabs = BM / kSlabRows;
  const int rounds = (n_slabs + NW - 1) / NW;
  for (int round = 0; round < rounds; ++round) {
    const int first_row = m0 + round * NW * kSlabRows;
    if (first_row >= S) break;  // CTA-uniform
    const int last_row = min(S, m0 + min(BM, (round + 1) * NW * kSlabRows)) - 1;
    const int kv_end = a.causal ? last_row + 1 : S;
    const int n_tiles = (kv_end + BN - 1) / BN;

    const int slab = round * NW + warp;
    const int row_base = m0 + slab * kSlabRows;
    const bool active = slab < n_slabs && row_base < S;
    const int row_lo = row_base + g;
    const int row_hi = row_base + g + 8;

    uint32_t qf[KD][4];
    float oacc[OB][4];
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < OB; ++i) oacc[i][0] = oacc[i][1] = oacc[i][2] = oacc[i][3] = 0.f;

    if (lag && round > 0) lag_cycles(kDropBarrierLagCycles);
    load_tile<T, D, THREADS>(sK, kg, a.k_ss, 0, BN, S, unmasked, 0);
    load_tile<T, D, THREADS>(sV, vg, a.v_ss, 0, BN, S, unmasked, v_shift);
    cp_async_commit();

    for (int j = 0; j < n_tiles; ++j) {
      const int stage = j & 1;
      if (j + 1 < n_tiles) {
        const int ns = (j + 1) & 1;
        load_tile<T, D, THREADS>(sK + ns * BN * P, kg, a.k_ss, (j + 1) * BN, BN, S, unmasked, 0);
        load_tile<T, D, THREADS>(sV + ns * BN * P, vg, a.v_ss, (j + 1) * BN, BN, S, unmasked,
                                 v_shift);
        cp_async_commit();
        cp_async_wait<1>();
      } else {
        cp_async_wait<0>();
      }
      // cp.async.wait_group covers only the calling thread's own copies, and every warp
      // reads (ldmatrix) rows that other warps copied: this read-after-write barrier makes
      // the whole tile visible to every warp. The drop-barrier knob removes it, so a warp
      // may read rows still in flight (stale shared memory: wrong results, no fault).
      if (!a.drop_barrier) __syncthreads();

      const int n0 = j * BN;
      const bool skip = !active || (a.causal && n0 > row_base + kSlabRows - 1);
      if (!skip) {
        if (j == 0) {
#pragma unroll
          for (int kk = 0; kk < KD; ++kk)
            ldmatrix_x4(qf[kk], sQ + (slab * kSlabRows + (lane % 16)) * P + kk * 16 + (lane / 16) * 8);
        }
        const T* tK = sK + stage * BN * P;
        const T* tV = sV + stage * BN * P;

        float s[NB][4];
#pragma unroll
        for (int i = 0; i < NB; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < KD; ++kk) {
#pragma unroll
          for (int np = 0; np < NB / 2; ++np) {
            uint32_t kf[4];
            ldmatrix_x4(kf, tK + (np * 16 + (lane % 8) + (lane / 16) * 8) * P + kk * 16 +
                                ((lane / 8) % 2) * 8);
            Mma::run(s[2 * np], qf[kk], kf[0], kf[1]);
            Mma::run(s[2 * np + 1], qf[kk], kf[2], kf[3]);
          }
        }

        // Scale into log2 units and mask: keys >= S (tail) and keys after the row (causal).
        float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + nb * 8 + tig * 2 + (e & 1);
            const int row = (e < 2) ? row_lo : row_hi;
            float x = s[nb][e] * a.scale_log2;
            if ((!unmasked && col >= S) || (a.causal && col > row)) x = -INFINITY;
            s[nb][e] = x;
            tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
          }
        }
        float alpha[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
          tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
          const float m_new = fmaxf(row_max[r], tile_max[r]);
          // A row with no visible key yet keeps max -inf: subtract 0 so exp2 gives 0, not NaN.
          const float m_use = (m_new == -INFINITY) ? 0.f : m_new;
          alpha[r] = exp2f(row_max[r] - m_use);
          row_max[r] = m_new;
          tile_max[r] = m_use;
        }
        float part[2] = {0.f, 0.f};
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float p = exp2f(s[nb][e] - tile_max[e / 2]);
            s[nb][e] = p;
            part[e / 2] += p;
          }
        }
        row_sum[0] = row_sum[0] * alpha[0] + part[0];
        row_sum[1] = row_sum[1] * alpha[1] + part[1];
#pragma unroll
        for (int ob = 0; ob < OB; ++ob) {
          oacc[ob][0] *= alpha[0];
          oacc[ob][1] *= alpha[0];
          oacc[ob][2] *= alpha[1];
          oacc[ob][3] *= alpha[1];
        }

        // O += P V: the score accumulators become A fragments (16 keys per k-step).
#pragma unroll
        for (int kc = 0; kc < BN / 16; ++kc) {
          uint32_t pf[4];
          pf[0] = Mma::pack(s[2 * kc][0], s[2 * kc][1]);
          pf[1] = Mma::pack(s[2 * kc][2], s[2 * kc][3]);
          pf[2] = Mma::pack(s[2 * kc + 1][0], s[2 * kc + 1][1]);
          pf[3] = Mma::pack(s[2 * kc + 1][2], s[2 * kc + 1][3]);
#pragma unroll
          for (int dp = 0; dp < D / 16; ++dp) {
            uint32_t vf[4];
            ldmatrix_x4_trans(vf, tV + (kc * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * P + dp * 16 +
                                      (lane / 16) * 8);
            Mma::run(oacc[2 * dp], pf, vf[0], vf[1]);
            Mma::run(oacc[2 * dp + 1], pf, vf[2], vf[3]);
          }
        }
      }
      // Nobody may overwrite this stage (tile j+2) before every warp has read it.
      __syncthreads();
    }

    if (active) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 1);
        row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 2);
      }
      const float inv_lo = 1.f / row_sum[0];
      const float inv_hi = 1.f / row_sum[1];
#pragma unroll
      for (int ob = 0; ob < OB; ++ob) {
        const int col = ob * 8 + tig * 2;
        if (row_lo < S)
          *reinterpret_cast<uint32_t*>(og + row_lo * a.o_ss + col) =
              Mma::pack(oacc[ob][0] * inv_lo, oacc[ob][1] * inv_lo);
        if (row_hi < S)
          *reinterpret_cast<uint32_t*>(og + row_hi * a.o_ss + col) =
              Mma::pack(oacc[ob][2] * inv_hi, oacc[ob][3] * inv_hi);
      }
    }
  }
}

}  // namespace cudadiag::attention::device

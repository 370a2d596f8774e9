#pragma once
// FlashAttention-2 style forward kernel: one CTA owns BLOCK_M query rows of one
// (batch, head); each warp computes 16-row slabs with mma.sync m16n8k16 (fp32
// accumulate), streaming K/V tiles of BLOCK_N rows through a two-stage cp.async
// pipeline with an online softmax. Included only by the attention .cu files.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/attention/attention_layout.h"
#include "kernels/runtime/counter_rng.h"

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
  int race_window;  // drop-barrier: cycles a late CTA's warps 1.. wait
  float race_rate;  // drop-barrier: probability that a CTA is late in a run
  unsigned long long run_seed;
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

// drop-barrier knob: in each run each CTA draws from the run's seed whether its warps
// other than warp 0 start late (probability race_rate), and if so they spin race_window
// cycles before issuing their copies of a freshly started tile (Q and the first K/V tile
// of every slab round). Without the barrier after cp.async.wait_group, warp 0 of a late
// CTA then reads rows whose copies the other warps have not even issued. Without any
// lag the window of the race is a few cycles (an H100 showed 0 failures in 200 runs),
// and with a lag in every CTA the race fires on every run, which is no intermittent
// bug; a seeded per-CTA draw makes it fire in a tunable fraction of runs, and the seed
// of a failing run replays it. The lag runs only when the knob is on (a kernel-argument
// branch, uniform per CTA).
inline constexpr uint32_t kRaceStream = 0x7ace;

__device__ __forceinline__ bool race_lags(unsigned long long run_seed, float rate) {
  const unsigned long long cta =
      blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
  return rng::uniform_01(rng::element_bits(run_seed, kRaceStream, cta)) < rate;
}

__device__ __forceinline__ void lag_cycles(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// 2^x on the special-function unit (flush-to-zero; 2^-inf = 0).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
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


// Whether a warp keeps its Q fragments in registers for the whole K/V sweep (Q read
// from shared memory once) or reloads them per tile (fewer registers: the two-slab
// D=128 kernels would otherwise exceed 255 registers and spill). Fragment registers:
// Q MT*D/16*4, O MT*D/8*4, scores MT*BN/8*4.
constexpr bool q_in_registers(int D, int BN, int MT) {
  return MT * (D / 16) * 4 + MT * (D / 8) * 4 + MT * (BN / 8) * 4 <= 192;
}

// MT: 16-row slabs a warp computes at once (1, or 2 for slabs_at_once()). Per tile:
// S = Q K^T (fp32 accumulate), online softmax in log2 units (one FFMA and one ex2 per
// score, the scale folded in), O += P V with P rounded to the input type.
template <typename T, int D, int BN, int NW, int MT>
__global__ void __launch_bounds__(NW * 32) fa2_fwd_kernel(const KernelArgs a) {
  constexpr int P = smem_row_elems(D);
  constexpr int THREADS = NW * 32;
  constexpr int KD = D / 16;   // k-steps of Q K^T
  constexpr int NB = BN / 8;   // n8 blocks of the score tile
  constexpr int OB = D / 8;    // n8 blocks of the output slab
  constexpr bool kQRegs = q_in_registers(D, BN, MT);
  using Mma = MmaOp<T>;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  const int BM = a.block_m;
  T* sK = sQ + smem_k_offset_rows(BM, BN) * P;
  T* sV = sQ + smem_v_offset_rows(BM, BN) * P;

  const int S = a.seq_len;
  // Causal: the last query blocks have the most keys; start them first so that the
  // longest CTAs do not form the tail of the grid.
  const int mblock = a.causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  const int m0 = mblock * BM;
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
  const bool drop = a.drop_barrier != 0;
  const int v_shift = a.smem_overflow ? 1 : 0;
  const float sl2 = a.scale_log2;

  // The drop-barrier race (see race_lags): late copy issuers in some CTAs of some runs.
  const bool late = drop && warp != 0 && race_lags(a.run_seed, a.race_rate);
  if (late) lag_cycles(a.race_window);

  load_tile<T, D, THREADS>(sQ, qg, a.q_ss, m0, BM, S, false, 0);
  cp_async_commit();

  constexpr int kWarpRows = MT * kSlabRows;
  const int n_slabs = BM / kSlabRows;
  const int rounds = (n_slabs + NW * MT - 1) / (NW * MT);
  for (int round = 0; round < rounds; ++round) {
    const int first_row = m0 + round * NW * kWarpRows;
    if (first_row >= S) break;  // CTA-uniform
    const int last_row = min(S, m0 + min(BM, (round + 1) * NW * kWarpRows)) - 1;
    const int kv_end = a.causal ? last_row + 1 : S;
    const int n_tiles = (kv_end + BN - 1) / BN;

    const int slab0 = (round * NW + warp) * MT;  // this warp's first slab in the CTA
    const int warp_row0 = m0 + slab0 * kSlabRows;
    const bool active = slab0 < n_slabs && warp_row0 < S;

    uint32_t qf[kQRegs ? MT : 1][kQRegs ? KD : 1][4];
    float oacc[MT][OB][4];
    float row_max[MT][2], row_sum[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      row_max[mt][0] = row_max[mt][1] = -INFINITY;
      row_sum[mt][0] = row_sum[mt][1] = 0.f;
#pragma unroll
      for (int i = 0; i < OB; ++i) oacc[mt][i][0] = oacc[mt][i][1] = oacc[mt][i][2] = oacc[mt][i][3] = 0.f;
    }

    if (round > 0) {
      if (late) lag_cycles(a.race_window);
      // Every warp is done with the previous round's last tile before its stage is refilled.
      if (!drop) __syncthreads();
    }
    load_tile<T, D, THREADS>(sK, kg, a.k_ss, 0, BN, S, unmasked, 0);
    load_tile<T, D, THREADS>(sV, vg, a.v_ss, 0, BN, S, unmasked, v_shift);
    cp_async_commit();

    for (int j = 0; j < n_tiles; ++j) {
      const int stage = j & 1;
      if (drop) {
        // The knob: tile j+1 issued before the wait, and no barrier after it, so a warp
        // may read rows that other warps' copies have not landed yet (stale shared
        // memory: wrong results, no fault).
        if (j + 1 < n_tiles) {
          const int ns = (j + 1) & 1;
          load_tile<T, D, THREADS>(sK + ns * BN * P, kg, a.k_ss, (j + 1) * BN, BN, S, unmasked, 0);
          load_tile<T, D, THREADS>(sV + ns * BN * P, vg, a.v_ss, (j + 1) * BN, BN, S, unmasked, v_shift);
          cp_async_commit();
          cp_async_wait<1>();
        } else {
          cp_async_wait<0>();
        }
      } else {
        // cp.async.wait_group covers only the calling thread's own copies, and every warp
        // reads (ldmatrix) rows that other warps copied: this barrier makes tile j visible
        // to every warp, and also says every warp is done with tile j-1, whose stage the
        // copies of tile j+1 then overwrite. One barrier per tile.
        cp_async_wait<0>();
        __syncthreads();
        if (j + 1 < n_tiles) {
          const int ns = (j + 1) & 1;
          load_tile<T, D, THREADS>(sK + ns * BN * P, kg, a.k_ss, (j + 1) * BN, BN, S, unmasked, 0);
          load_tile<T, D, THREADS>(sV + ns * BN * P, vg, a.v_ss, (j + 1) * BN, BN, S, unmasked, v_shift);
          cp_async_commit();
        }
      }

      const int n0 = j * BN;
      const bool skip = !active || (a.causal && n0 > warp_row0 + kWarpRows - 1);
      if (!skip) {
        const T* tK = sK + stage * BN * P;
        const T* tV = sV + stage * BN * P;
        if constexpr (kQRegs) {
          if (j == 0) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
              for (int kk = 0; kk < KD; ++kk)
                ldmatrix_x4(qf[kQRegs ? mt : 0][kQRegs ? kk : 0],
                            sQ + ((slab0 + mt) * kSlabRows + (lane % 16)) * P + kk * 16 + (lane / 16) * 8);
          }
        }

        float s[MT][NB][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int i = 0; i < NB; ++i) s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < KD; ++kk) {
          uint32_t qk[MT][4];
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            if constexpr (kQRegs) {
#pragma unroll
              for (int e = 0; e < 4; ++e) qk[mt][e] = qf[kQRegs ? mt : 0][kQRegs ? kk : 0][e];
            } else {
              ldmatrix_x4(qk[mt], sQ + ((slab0 + mt) * kSlabRows + (lane % 16)) * P + kk * 16 + (lane / 16) * 8);
            }
          }
#pragma unroll
          for (int np = 0; np < NB / 2; ++np) {
            uint32_t kf[4];
            ldmatrix_x4(kf, tK + (np * 16 + (lane % 8) + (lane / 16) * 8) * P + kk * 16 + ((lane / 8) % 2) * 8);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              Mma::run(s[mt][2 * np], qk[mt], kf[0], kf[1]);
              Mma::run(s[mt][2 * np + 1], qk[mt], kf[2], kf[3]);
            }
          }
        }

        // Masks only where a tile needs them (warp-uniform): keys >= S (tail) and keys
        // after the row (causal diagonal).
        const bool tail = !unmasked && n0 + BN > S;
        const bool diag = a.causal && n0 + BN - 1 > warp_row0;
        if (tail || diag) {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int nb = 0; nb < NB; ++nb)
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const int col = n0 + nb * 8 + tig * 2 + (e & 1);
                const int row = warp_row0 + mt * kSlabRows + g + (e < 2 ? 0 : 8);
                if ((tail && col >= S) || (diag && col > row)) s[mt][nb][e] = -INFINITY;
              }
        }

        // Online softmax on raw scores; the scale goes into the exponent (log2 units).
        float alpha[MT][2], msc[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            float tmax = -INFINITY;
#pragma unroll
            for (int nb = 0; nb < NB; ++nb) tmax = fmaxf(tmax, fmaxf(s[mt][nb][2 * r], s[mt][nb][2 * r + 1]));
            tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
            tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 2));
            const float m_new = fmaxf(row_max[mt][r], tmax);
            // A row with no visible key yet keeps max -inf: subtract 0 so ex2 gives 0, not NaN.
            const float m_use = (m_new == -INFINITY) ? 0.f : m_new;
            alpha[mt][r] = ex2((row_max[mt][r] - m_use) * sl2);
            row_max[mt][r] = m_new;
            msc[mt][r] = m_use * sl2;
          }
          float part[2] = {0.f, 0.f};
#pragma unroll
          for (int nb = 0; nb < NB; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float p = ex2(fmaf(s[mt][nb][e], sl2, -msc[mt][e / 2]));
              s[mt][nb][e] = p;
              part[e / 2] += p;
            }
          row_sum[mt][0] = row_sum[mt][0] * alpha[mt][0] + part[0];
          row_sum[mt][1] = row_sum[mt][1] * alpha[mt][1] + part[1];
        }
        // O rescaled only when some row of the warp saw a new maximum (alpha != 1): once
        // the maxima settle, most tiles skip MT*D/2 multiplies per thread (warp-uniform).
        bool rescale = false;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) rescale |= alpha[mt][0] != 1.f || alpha[mt][1] != 1.f;
        if (__any_sync(0xffffffffu, rescale)) {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int ob = 0; ob < OB; ++ob) {
              oacc[mt][ob][0] *= alpha[mt][0];
              oacc[mt][ob][1] *= alpha[mt][0];
              oacc[mt][ob][2] *= alpha[mt][1];
              oacc[mt][ob][3] *= alpha[mt][1];
            }
        }

        // P rounded to the input type right away, as the A fragments of P V (16 keys per
        // k-step): half the registers of the fp32 scores while O accumulates.
        uint32_t pf[MT][BN / 16][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int kc = 0; kc < BN / 16; ++kc) {
            pf[mt][kc][0] = Mma::pack(s[mt][2 * kc][0], s[mt][2 * kc][1]);
            pf[mt][kc][1] = Mma::pack(s[mt][2 * kc][2], s[mt][2 * kc][3]);
            pf[mt][kc][2] = Mma::pack(s[mt][2 * kc + 1][0], s[mt][2 * kc + 1][1]);
            pf[mt][kc][3] = Mma::pack(s[mt][2 * kc + 1][2], s[mt][2 * kc + 1][3]);
          }

        // O += P V; each V fragment feeds every slab of the warp.
#pragma unroll
        for (int kc = 0; kc < BN / 16; ++kc) {
#pragma unroll
          for (int dp = 0; dp < D / 16; ++dp) {
            uint32_t vf[4];
            ldmatrix_x4_trans(vf, tV + (kc * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * P + dp * 16 + (lane / 16) * 8);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              Mma::run(oacc[mt][2 * dp], pf[mt][kc], vf[0], vf[1]);
              Mma::run(oacc[mt][2 * dp + 1], pf[mt][kc], vf[2], vf[3]);
            }
          }
        }
      }
      // The knob keeps the original structure: nobody may overwrite this stage (tile j+2)
      // before every warp has read it.
      if (drop) __syncthreads();
    }

    if (active) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          row_sum[mt][r] += __shfl_xor_sync(0xffffffffu, row_sum[mt][r], 1);
          row_sum[mt][r] += __shfl_xor_sync(0xffffffffu, row_sum[mt][r], 2);
        }
        const int row_lo = warp_row0 + mt * kSlabRows + g;
        const int row_hi = row_lo + 8;
        const float inv_lo = 1.f / row_sum[mt][0];
        const float inv_hi = 1.f / row_sum[mt][1];
#pragma unroll
        for (int ob = 0; ob < OB; ++ob) {
          const int col = ob * 8 + tig * 2;
          if (row_lo < S)
            *reinterpret_cast<uint32_t*>(og + row_lo * a.o_ss + col) =
                Mma::pack(oacc[mt][ob][0] * inv_lo, oacc[mt][ob][1] * inv_lo);
          if (row_hi < S)
            *reinterpret_cast<uint32_t*>(og + row_hi * a.o_ss + col) =
                Mma::pack(oacc[mt][ob][2] * inv_hi, oacc[mt][ob][3] * inv_hi);
        }
      }
    }
  }
}

}  // namespace cudadiag::attention::device

// Device verification of the attention kernel: an fp32 reference (no tensor cores, no
// shared code with the kernel under test) and the comparison reduced on the device.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/attention/attention_check.h"
#include "kernels/runtime/run_check.cuh"

namespace cudadiag::attention {
namespace {

struct RefArgs {
  const void* q;
  const void* k;
  const void* v;
  long long q_sb, q_sh, q_ss;
  long long k_sb, k_sh, k_ss;
  long long v_sb, v_sh, v_ss;
  int seq_len, heads, causal;
};

RefArgs ref_args(const Problem& p, const DeviceTensors& t) {
  return RefArgs{t.q,        t.k,        t.v,        p.q.batch, p.q.head, p.q.seq,     p.k.batch,
                 p.k.head,   p.k.seq,    p.v.batch,  p.v.head,  p.v.seq,  p.seq_len,   p.heads,
                 p.causal ? 1 : 0};
}

template <typename T>
__device__ __forceinline__ float load_elem(const void* base, long long i) {
  return static_cast<float>(static_cast<const T*>(base)[i]);
}

// One block: kRefRows consecutive query rows of one (batch, head), one warp each. Keys go
// through shared memory in chunks of 32 (one per lane for the scores, then broadcast
// for P V), with an online softmax across chunks in fp32.
constexpr int kRefRows = 8;
constexpr int kChunk = 32;

template <typename T, int D>
__global__ void __launch_bounds__(kRefRows * 32) reference_kernel(const RefArgs a, float* out) {
  constexpr int KP = D + 1;  // odd pitch: lane j reads row j without bank conflicts
  constexpr int CPL = D / 32;  // output columns per lane
  __shared__ float sq[kRefRows][D];
  __shared__ float sk[kChunk][KP];
  __shared__ float sv[kChunk][D];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int h = blockIdx.y, b = blockIdx.z;
  const int row = blockIdx.x * kRefRows + warp;
  const bool valid = row < a.seq_len;
  const long long qo = b * a.q_sb + h * a.q_sh, ko = b * a.k_sb + h * a.k_sh, vo = b * a.v_sb + h * a.v_sh;
  for (int d = lane; d < D; d += 32) sq[warp][d] = valid ? load_elem<T>(a.q, qo + row * a.q_ss + d) : 0.f;
  const int block_last = min(a.seq_len, (blockIdx.x + 1) * kRefRows) - 1;
  const int kv_end = a.causal ? block_last + 1 : a.seq_len;
  const int row_end = valid ? (a.causal ? row + 1 : a.seq_len) : 0;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  float m = -INFINITY, l = 0.f, acc[CPL];
#pragma unroll
  for (int i = 0; i < CPL; ++i) acc[i] = 0.f;
  for (int c0 = 0; c0 < kv_end; c0 += kChunk) {
    __syncthreads();  // the previous chunk is consumed (and sq is written, first time)
    for (int e = threadIdx.x; e < kChunk * D; e += kRefRows * 32) {
      const int r = e / D, d = e % D, j = c0 + r;
      sk[r][d] = j < a.seq_len ? load_elem<T>(a.k, ko + j * a.k_ss + d) : 0.f;
      sv[r][d] = j < a.seq_len ? load_elem<T>(a.v, vo + j * a.v_ss + d) : 0.f;
    }
    __syncthreads();
    const int j = c0 + lane;
    float s = -INFINITY;
    if (j < row_end) {
      float dot = 0.f;
#pragma unroll 8
      for (int d = 0; d < D; ++d) dot = fmaf(sq[warp][d], sk[lane][d], dot);
      s = dot * scale;
    }
    float cmax = s;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) cmax = fmaxf(cmax, __shfl_xor_sync(0xffffffffu, cmax, o));
    const float m_new = fmaxf(m, cmax);
    const float m_use = m_new == -INFINITY ? 0.f : m_new;  // no visible key yet: exp gives 0, not NaN
    const float alpha = expf(m - m_use);
    const float pj = expf(s - m_use);
    float psum = pj;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) psum += __shfl_xor_sync(0xffffffffu, psum, o);
    l = l * alpha + psum;
#pragma unroll
    for (int i = 0; i < CPL; ++i) acc[i] *= alpha;
    for (int t = 0; t < kChunk; ++t) {
      const float pt = __shfl_sync(0xffffffffu, pj, t);
#pragma unroll
      for (int i = 0; i < CPL; ++i) acc[i] = fmaf(pt, sv[t][lane + 32 * i], acc[i]);
    }
    m = m_new;
  }
  if (valid) {
    float* o = out + ((static_cast<long long>(b) * a.heads + h) * a.seq_len + row) * D;
#pragma unroll
    for (int i = 0; i < CPL; ++i) o[lane + 32 * i] = acc[i] / l;
  }
}

struct CheckArgs {
  const void* o;
  long long o_sb, o_sh, o_ss;
  const float* ref;
  int batch, heads, seq_len, head_dim;
  double row_limit2;  // (10 * tolerance)^2: a row above it counts as bad
  gpu::RunCounters* c;
};

__device__ __forceinline__ bool finite_bits(float x) { return isfinite(x); }

template <typename T>
__global__ void __launch_bounds__(256) check_kernel(const CheckArgs a) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long rows = static_cast<long long>(a.batch) * a.heads * a.seq_len;
  const long long warps_total = static_cast<long long>(gridDim.x) * 8;
  double diff2 = 0.0, ref2 = 0.0;
  unsigned long long checked = 0, non_finite = 0, ref_bad = 0, bad_rows = 0;
  unsigned long long first_bad = gpu::kNoIndex, first_bad_row = gpu::kNoIndex;
  for (long long row = blockIdx.x * 8LL + warp; row < rows; row += warps_total) {
    const int i = static_cast<int>(row % a.seq_len);
    const int h = static_cast<int>((row / a.seq_len) % a.heads);
    const int b = static_cast<int>(row / (static_cast<long long>(a.seq_len) * a.heads));
    const T* o = static_cast<const T*>(a.o) + b * a.o_sb + h * a.o_sh + i * a.o_ss;
    const float* r = a.ref + row * a.head_dim;
    double rd2 = 0.0, rr2 = 0.0;
    for (int d = lane; d < a.head_dim; d += 32) {
      const T ov = o[d];
      const float x = static_cast<float>(ov);
      const float e = r[d];
      ++checked;
      if (!finite_bits(e)) ++ref_bad;
      if (!finite_bits(x)) {
        ++non_finite;
        uint16_t bits;
        memcpy(&bits, &ov, sizeof bits);
        first_bad = min(first_bad, gpu::device::pack_bad(static_cast<unsigned long long>(row) * a.head_dim + d, bits));
        continue;
      }
      const double diff = static_cast<double>(x) - e;
      rd2 += diff * diff;
      rr2 += static_cast<double>(e) * e;
    }
    rd2 = gpu::device::warp_sum(rd2);
    rr2 = gpu::device::warp_sum(rr2);
    diff2 += rd2;
    ref2 += rr2;
    if (rd2 > a.row_limit2 * fmax(rr2, 1e-30)) {
      ++bad_rows;  // the same on every lane: counted once below
      first_bad_row = min(first_bad_row, static_cast<unsigned long long>(row));
    }
  }
  gpu::device::add_counts(a.c, checked, non_finite, first_bad);
  ref_bad = gpu::device::warp_sum(ref_bad);
  if (lane == 0) {
    if (diff2 != 0.0) atomicAdd(&a.c->diff2, diff2);
    if (ref2 != 0.0) atomicAdd(&a.c->ref2, ref2);
    if (ref_bad) atomicAdd(&a.c->ref_non_finite, ref_bad);
    if (bad_rows) atomicAdd(&a.c->bad_rows, bad_rows);
    if (first_bad_row != gpu::kNoIndex) atomicMin(&a.c->first_bad_row, first_bad_row);
  }
}

template <typename T>
const void* reference_for(int head_dim) {
  if (head_dim == 64) return reinterpret_cast<const void*>(&reference_kernel<T, 64>);
  if (head_dim == 128) return reinterpret_cast<const void*>(&reference_kernel<T, 128>);
  return nullptr;
}

}  // namespace

void launch_reference(gpu::Session& s, const Problem& p, const DeviceTensors& t, float* out) {
  const void* fn = p.dtype == DType::fp16 ? reference_for<__half>(p.head_dim)
                                          : reference_for<__nv_bfloat16>(p.head_dim);
  if (!fn) throw std::invalid_argument("no reference kernel for head_dim " + std::to_string(p.head_dim));
  RefArgs a = ref_args(p, t);
  void* args[] = {&a, &out};
  const dim3 grid(static_cast<unsigned>((p.seq_len + kRefRows - 1) / kRefRows), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  CD_CHECK(s, cudaLaunchKernel(fn, grid, dim3(kRefRows * 32), args, 0, nullptr), "launch");
  CD_CHECK_LAUNCH(s);
}

void launch_check(gpu::Session& s, const Problem& p, const DeviceTensors& t, const float* ref, double tolerance,
                  gpu::RunCounters* c) {
  CheckArgs a{t.o, p.o.batch, p.o.head, p.o.seq, ref, p.batch, p.heads, p.seq_len, p.head_dim,
              100.0 * tolerance * tolerance, c};
  const long long rows = static_cast<long long>(p.batch) * p.heads * p.seq_len;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((rows + 7) / 8, 2048));
  if (p.dtype == DType::fp16) check_kernel<__half><<<blocks, 256>>>(a);
  else check_kernel<__nv_bfloat16><<<blocks, 256>>>(a);
  CD_CHECK_LAUNCH(s);
}

}  // namespace cudadiag::attention

// Stride-aware gather and head-packing copy for index_select on sliced views.
// Release builds define NDEBUG, which would compile the bounds assert away.
#undef NDEBUG
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cassert>
#include <cstdint>
#include <vector>

#include "kernels/index_select/index_select.h"

namespace cudadiag::index_select {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(long long n) {
  const long long b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

// out[b, j, h, d] = src[b * sb + idx[j] * ss + h * sh + d]
template <typename T, typename I>
__global__ void gather_rows_kernel(const T* src, long long sb, long long ss, long long sh, const I* idx, T* out,
                                   long long B, long long n, long long heads, long long D, long long S,
                                   bool checked) {
  const long long total = B * n * heads * D;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long d = e % D;
    const long long h = (e / D) % heads;
    const long long j = (e / (D * heads)) % n;
    const long long b = e / (D * heads * n);
    const long long s = static_cast<long long>(idx[j]);
    if (checked) assert(s >= 0 && s < S && "index_select: index out of range");
    out[e] = src[b * sb + s * ss + h * sh + d];
  }
}

// out[b, s, h, d] = view[b * sb + s * ss + h * sh + d]: the heads slice made contiguous.
template <typename T>
__global__ void pack_heads_kernel(const T* view, long long sb, long long ss, long long sh, T* out, long long B,
                                  long long S, long long heads, long long D) {
  const long long total = B * S * heads * D;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long d = e % D;
    const long long h = (e / D) % heads;
    const long long s = (e / (D * heads)) % S;
    const long long b = e / (D * heads * S);
    out[e] = view[b * sb + s * ss + h * sh + d];
  }
}

template <typename T, typename I>
void run_typed(gpu::Session& s, const GatherProblem& p, const std::vector<std::uint8_t>& k_host,
               const std::vector<std::uint8_t>& v_host, const std::vector<long long>& idx_host,
               std::vector<std::uint8_t>& k_out, std::vector<std::uint8_t>& v_out) {
  const long long heads = p.h1 - p.h0;
  const long long n = static_cast<long long>(idx_host.size());
  const size_t src_bytes = static_cast<size_t>(p.B * p.S * p.H * p.D) * sizeof(T);
  const size_t out_elems = static_cast<size_t>(p.B * n * heads * p.D);
  std::vector<I> idx_typed(idx_host.begin(), idx_host.end());

  T* k = static_cast<T*>(s.alloc("k", src_bytes));
  T* v = static_cast<T*>(s.alloc("v", src_bytes));
  I* idx = s.alloc_n<I>("idx", idx_typed.size());
  T* k_contig = nullptr;
  T* v_contig = nullptr;
  if (p.via_copy) {
    const size_t packed = static_cast<size_t>(p.B * p.S * heads * p.D);
    k_contig = s.alloc_n<T>("k_contig", packed);
    v_contig = s.alloc_n<T>("v_contig", packed);
  }
  T* ko = s.alloc_n<T>("k_out", out_elems);
  T* vo = s.alloc_n<T>("v_out", out_elems);
  s.copy_to_device(k, k_host.data(), src_bytes);
  s.copy_to_device(v, v_host.data(), src_bytes);
  s.copy_to_device(idx, idx_typed.data(), idx_typed.size() * sizeof(I));
  s.memset(ko, 0xFF, out_elems * sizeof(T));
  s.memset(vo, 0xFF, out_elems * sizeof(T));

  const T* k_src = k + p.base_offset;
  const T* v_src = v + p.base_offset;
  if (p.via_copy) {
    // .contiguous() of the view [:, :, h0:h1]: real strides S*H*D, H*D, D from K + h0*D.
    const long long total = p.B * p.S * heads * p.D;
    const T* k_view = k + p.h0 * p.D;
    const T* v_view = v + p.h0 * p.D;
    s.record_launch("pack_heads_kernel", dim3(blocks_for(total)), dim3(kThreads), 0, {k_view, k_contig});
    pack_heads_kernel<T><<<blocks_for(total), kThreads>>>(k_view, p.S * p.H * p.D, p.H * p.D, p.D, k_contig, p.B,
                                                          p.S, heads, p.D);
    CD_CHECK_LAUNCH(s);
    s.record_launch("pack_heads_kernel", dim3(blocks_for(total)), dim3(kThreads), 0, {v_view, v_contig});
    pack_heads_kernel<T><<<blocks_for(total), kThreads>>>(v_view, p.S * p.H * p.D, p.H * p.D, p.D, v_contig, p.B,
                                                          p.S, heads, p.D);
    CD_CHECK_LAUNCH(s);
    k_src = k_contig + p.base_offset;
    v_src = v_contig + p.base_offset;
  }
  const long long total = static_cast<long long>(out_elems);
  s.record_launch("gather_rows_kernel", dim3(blocks_for(total)), dim3(kThreads), 0, {k_src, idx, ko});
  gather_rows_kernel<T, I><<<blocks_for(total), kThreads>>>(k_src, p.stride_b, p.stride_s, p.stride_h, idx, ko, p.B,
                                                            n, heads, p.D, p.S, p.checked);
  CD_CHECK_LAUNCH(s);
  s.record_launch("gather_rows_kernel", dim3(blocks_for(total)), dim3(kThreads), 0, {v_src, idx, vo});
  gather_rows_kernel<T, I><<<blocks_for(total), kThreads>>>(v_src, p.stride_b, p.stride_s, p.stride_h, idx, vo, p.B,
                                                            n, heads, p.D, p.S, p.checked);
  CD_CHECK_LAUNCH(s);
  s.synchronize();

  k_out.assign(out_elems * sizeof(T), 0);
  v_out.assign(out_elems * sizeof(T), 0);
  s.copy_to_host(k_out.data(), ko, k_out.size());
  s.copy_to_host(v_out.data(), vo, v_out.size());
}

template <typename T>
void run_index_typed(gpu::Session& s, const GatherProblem& p, const std::vector<std::uint8_t>& k,
                     const std::vector<std::uint8_t>& v, const std::vector<long long>& idx,
                     std::vector<std::uint8_t>& k_out, std::vector<std::uint8_t>& v_out) {
  if (p.index64) run_typed<T, long long>(s, p, k, v, idx, k_out, v_out);
  else run_typed<T, int>(s, p, k, v, idx, k_out, v_out);
}

}  // namespace

void run_gather_pair(gpu::Session& s, const GatherProblem& p, const std::vector<std::uint8_t>& k,
                     const std::vector<std::uint8_t>& v, const std::vector<long long>& idx,
                     std::vector<std::uint8_t>& k_out, std::vector<std::uint8_t>& v_out) {
  switch (p.dtype) {
    case Dtype::fp16: run_index_typed<__half>(s, p, k, v, idx, k_out, v_out); break;
    case Dtype::bf16: run_index_typed<__nv_bfloat16>(s, p, k, v, idx, k_out, v_out); break;
    case Dtype::fp32: run_index_typed<float>(s, p, k, v, idx, k_out, v_out); break;
  }
}

}  // namespace cudadiag::index_select

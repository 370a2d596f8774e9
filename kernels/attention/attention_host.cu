// Host side of the attention kernel: kernel selection, launch (with the dynamic
// shared-memory opt-in), the naive fp32 GPU reference, dtype conversion and timing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_kernel.cuh"
#include "kernels/attention/attention_kernels.h"

namespace cudadiag::attention {
namespace {

const void* find_kernel(const Problem& p) {
  if (p.dtype == DType::fp16 && p.head_dim == 64) return detail::kernel_fp16_d64(p.block_n, p.warps);
  if (p.dtype == DType::fp16 && p.head_dim == 128) return detail::kernel_fp16_d128(p.block_n, p.warps);
  if (p.dtype == DType::bf16 && p.head_dim == 64) return detail::kernel_bf16_d64(p.block_n, p.warps);
  if (p.dtype == DType::bf16 && p.head_dim == 128) return detail::kernel_bf16_d128(p.block_n, p.warps);
  return nullptr;
}

device::KernelArgs kernel_args(const Problem& p, const DeviceTensors& t) {
  device::KernelArgs a{};
  a.q = t.q;
  a.k = t.k;
  a.v = t.v;
  a.o = t.o;
  a.q_sb = p.q.batch, a.q_sh = p.q.head, a.q_ss = p.q.seq;
  a.k_sb = p.k.batch, a.k_sh = p.k.head, a.k_ss = p.k.seq;
  a.v_sb = p.v.batch, a.v_sh = p.v.head, a.v_ss = p.v.seq;
  a.o_sb = p.o.batch, a.o_sh = p.o.head, a.o_ss = p.o.seq;
  a.seq_len = p.seq_len;
  a.block_m = p.block_m;
  a.scale_log2 = static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(p.head_dim)));
  a.causal = p.causal ? 1 : 0;
  a.no_tail_mask = p.knobs.no_tail_mask ? 1 : 0;
  a.drop_barrier = p.knobs.drop_barrier ? 1 : 0;
  a.smem_overflow = p.knobs.smem_overflow ? 1 : 0;
  return a;
}

dim3 grid_of(const Problem& p) {
  return dim3(static_cast<unsigned>((p.seq_len + p.block_m - 1) / p.block_m),
              static_cast<unsigned>(p.heads), static_cast<unsigned>(p.batch));
}

// Naive fp32 reference: one thread per (batch, head, query row), online softmax in fp32.
template <typename T, int D>
__global__ void reference_kernel(const device::KernelArgs a, int heads, int batch, float* out) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long total = static_cast<long long>(batch) * heads * a.seq_len;
  if (idx >= total) return;
  const int row = static_cast<int>(idx % a.seq_len);
  const int h = static_cast<int>((idx / a.seq_len) % heads);
  const int b = static_cast<int>(idx / (static_cast<long long>(a.seq_len) * heads));
  const T* q = static_cast<const T*>(a.q) + b * a.q_sb + h * a.q_sh + row * a.q_ss;
  const T* k = static_cast<const T*>(a.k) + b * a.k_sb + h * a.k_sh;
  const T* v = static_cast<const T*>(a.v) + b * a.v_sb + h * a.v_sh;
  float qv[D], acc[D];
  for (int d = 0; d < D; ++d) {
    qv[d] = static_cast<float>(q[d]);
    acc[d] = 0.f;
  }
  const float scale = rsqrtf(static_cast<float>(D));
  float m = -INFINITY, l = 0.f;
  const int end = a.causal ? row + 1 : a.seq_len;
  for (int j = 0; j < end; ++j) {
    const T* kr = k + j * a.k_ss;
    float s = 0.f;
    for (int d = 0; d < D; ++d) s += qv[d] * static_cast<float>(kr[d]);
    s *= scale;
    const float m_new = fmaxf(m, s);
    const float alpha = expf(m - m_new);
    const float p = expf(s - m_new);
    l = l * alpha + p;
    const T* vr = v + j * a.v_ss;
    for (int d = 0; d < D; ++d) acc[d] = acc[d] * alpha + p * static_cast<float>(vr[d]);
    m = m_new;
  }
  float* o = out + idx * D;
  for (int d = 0; d < D; ++d) o[d] = acc[d] / l;
}

template <typename T>
const void* reference_for(int head_dim) {
  if (head_dim == 64) return reinterpret_cast<const void*>(&reference_kernel<T, 64>);
  if (head_dim == 128) return reinterpret_cast<const void*>(&reference_kernel<T, 128>);
  return nullptr;
}

}  // namespace

bool has_kernel(const Problem& p) { return find_kernel(p) != nullptr; }

std::string kernel_name(const Problem& p) {
  return std::string("fa2_fwd<") + (p.dtype == DType::fp16 ? "fp16" : "bf16") + ",d" +
         std::to_string(p.head_dim) + ",bm" + std::to_string(p.block_m) + ",bn" +
         std::to_string(p.block_n) + ",w" + std::to_string(p.warps) + (p.causal ? ",causal" : "") +
         ">";
}

void launch_attention(gpu::Session& s, const Problem& p, const DeviceTensors& t) {
  const void* fn = find_kernel(p);
  if (!fn) throw std::invalid_argument("no compiled attention kernel for " + kernel_name(p));
  const size_t smem = smem_bytes(p.block_m, p.block_n, p.head_dim);
  // Above 48 KB a kernel needs an explicit opt-in to more dynamic shared memory.
  CD_CHECK(s, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
           "attribute");
  device::KernelArgs a = kernel_args(p, t);
  void* args[] = {&a};
  const dim3 grid = grid_of(p);
  const dim3 block(static_cast<unsigned>(p.warps * 32));
  s.record_launch(kernel_name(p).c_str(), grid, block, smem, {t.q, t.k, t.v, t.o});
  CD_CHECK(s, cudaLaunchKernel(fn, grid, block, args, smem, nullptr), "launch");
  CD_CHECK_LAUNCH(s);
}

void launch_reference(gpu::Session& s, const Problem& p, const DeviceTensors& t, float* out) {
  const void* fn = p.dtype == DType::fp16 ? reference_for<__half>(p.head_dim)
                                          : reference_for<__nv_bfloat16>(p.head_dim);
  if (!fn) throw std::invalid_argument("no reference kernel for head_dim " + std::to_string(p.head_dim));
  device::KernelArgs a = kernel_args(p, t);
  a.causal = p.causal ? 1 : 0;
  int heads = p.heads, batch = p.batch;
  void* args[] = {&a, &heads, &batch, &out};
  const long long rows = static_cast<long long>(p.batch) * p.heads * p.seq_len;
  const dim3 block(128);
  const dim3 grid(static_cast<unsigned>((rows + 127) / 128));
  s.record_launch("attention_reference_fp32", grid, block, 0, {t.q, t.k, t.v, out});
  CD_CHECK(s, cudaLaunchKernel(fn, grid, block, args, 0, nullptr), "launch");
  CD_CHECK_LAUNCH(s);
}

// The raw structs carry the bit pattern; constructing the value types from them
// avoids copying bytes into a class with protected members.
void to_device_format(DType dt, const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (dt == DType::fp16) {
      out[i] = static_cast<__half_raw>(__float2half_rn(in[i])).x;
    } else {
      out[i] = static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(in[i])).x;
    }
  }
}

void from_device_format(DType dt, const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (dt == DType::fp16) {
      __half_raw r;
      r.x = in[i];
      out[i] = __half2float(__half(r));
    } else {
      __nv_bfloat16_raw r;
      r.x = in[i];
      out[i] = __bfloat162float(__nv_bfloat16(r));
    }
  }
}

std::vector<float> time_attention(gpu::Session& s, const Problem& p, const DeviceTensors& t,
                                  int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) launch_attention(s, p, t);
  s.synchronize();
  cudaEvent_t start = nullptr, stop = nullptr;
  CD_CHECK(s, cudaEventCreate(&start), "event");
  CD_CHECK(s, cudaEventCreate(&stop), "event");
  std::vector<float> ms;
  ms.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    CD_CHECK(s, cudaEventRecord(start), "event");
    launch_attention(s, p, t);
    CD_CHECK(s, cudaEventRecord(stop), "event");
    CD_CHECK(s, cudaEventSynchronize(stop), "synchronize");
    float x = 0.f;
    CD_CHECK(s, cudaEventElapsedTime(&x, start, stop), "event");
    ms.push_back(x);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

}  // namespace cudadiag::attention

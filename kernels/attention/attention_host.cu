// Host side of the attention kernel: kernel selection, launch (with the dynamic
// shared-memory opt-in), dtype conversion and timing.
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

int slabs_of(const Problem& p) { return slabs_at_once(p.block_m, p.block_n, p.warps); }

const void* find_kernel(const Problem& p) {
  if (p.engine == Engine::wgmma)
    return p.head_dim == kWgmmaHeadDim && p.block_m == kWgmmaBlockM && p.warps == kWgmmaWarps
               ? detail::kernel_wgmma(p.dtype == DType::bf16, p.block_n)
               : nullptr;
  const int m = slabs_of(p);
  if (p.dtype == DType::fp16 && p.head_dim == 64) return detail::kernel_fp16_d64(p.block_n, p.warps, m);
  if (p.dtype == DType::fp16 && p.head_dim == 128) return detail::kernel_fp16_d128(p.block_n, p.warps, m);
  if (p.dtype == DType::bf16 && p.head_dim == 64) return detail::kernel_bf16_d64(p.block_n, p.warps, m);
  if (p.dtype == DType::bf16 && p.head_dim == 128) return detail::kernel_bf16_d128(p.block_n, p.warps, m);
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
  a.race_window = p.knobs.race_window;
  a.race_rate = static_cast<float>(p.knobs.race_rate);
  return a;
}

dim3 grid_of(const Problem& p) {
  return dim3(static_cast<unsigned>((p.seq_len + p.block_m - 1) / p.block_m),
              static_cast<unsigned>(p.heads), static_cast<unsigned>(p.batch));
}

}  // namespace

bool has_kernel(const Problem& p) { return find_kernel(p) != nullptr; }

std::string kernel_name(const Problem& p) {
  return std::string(p.engine == Engine::wgmma ? "fa_wgmma<" : "fa2_fwd<") + (p.dtype == DType::fp16 ? "fp16" : "bf16") + ",d" +
         std::to_string(p.head_dim) + ",bm" + std::to_string(p.block_m) + ",bn" +
         std::to_string(p.block_n) + ",w" + std::to_string(p.warps) + (slabs_of(p) == 2 ? ",2slab" : "") +
         (p.causal ? ",causal" : "") + ">";
}

PreparedLaunch prepare_launch(gpu::Session& s, const Problem& p) {
  PreparedLaunch l;
  l.fn = find_kernel(p);
  if (!l.fn) throw std::invalid_argument("no compiled attention kernel for " + kernel_name(p));
  l.name = kernel_name(p);
  l.smem = p.engine == Engine::wgmma ? wgmma_smem_bytes(p.block_n) : smem_bytes(p.block_m, p.block_n, p.head_dim);
  l.grid = grid_of(p);
  l.block = dim3(static_cast<unsigned>(p.warps * 32));
  // Above 48 KB a kernel needs an explicit opt-in to more dynamic shared memory.
  CD_CHECK(s, cudaFuncSetAttribute(l.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(l.smem)),
           "attribute");
  return l;
}

void launch_prepared(gpu::Session& s, const PreparedLaunch& l, const Problem& p, const DeviceTensors& t,
                     uint64_t run_seed) {
  device::KernelArgs a = kernel_args(p, t);
  a.run_seed = run_seed;
  void* args[] = {&a};
  s.record_launch(l.name.c_str(), l.grid, l.block, l.smem, {t.q, t.k, t.v, t.o});
  CD_CHECK(s, cudaLaunchKernel(l.fn, l.grid, l.block, args, l.smem, nullptr), "launch");
  CD_CHECK_LAUNCH(s);
}

void launch_attention(gpu::Session& s, const Problem& p, const DeviceTensors& t, uint64_t run_seed) {
  launch_prepared(s, prepare_launch(s, p), p, t, run_seed);
}

// The raw structs carry the bit pattern; constructing the value types from them
// avoids copying bytes into a class with protected members.
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
  const PreparedLaunch l = prepare_launch(s, p);
  for (int i = 0; i < warmup; ++i) launch_prepared(s, l, p, t, 0);
  s.synchronize();
  cudaEvent_t start = nullptr, stop = nullptr;
  CD_CHECK(s, cudaEventCreate(&start), "event");
  CD_CHECK(s, cudaEventCreate(&stop), "event");
  std::vector<float> ms;
  ms.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    CD_CHECK(s, cudaEventRecord(start), "event");
    launch_prepared(s, l, p, t, 0);
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

#pragma once
// Host API of the bundled FlashAttention-2 style forward kernel (tensor cores:
// mma.sync m16n8k16, ldmatrix, cp.async double buffering). Plain C++ header: the
// kernels live in the .cu files next to it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention/attention_layout.h"
#include "kernels/runtime/gpu_runtime.h"

namespace cudadiag::attention {

// Strides of one [B, H, S, D] tensor in elements; D is contiguous.
struct Strides {
  long long batch = 0;
  long long head = 0;
  long long seq = 0;
};

// Deliberate faults, each off by default; runtime flags of the same kernel.
struct FaultKnobs {
  int misalign_bytes = 0;    // Q/K/V base pointers offset by this many bytes
  bool no_tail_mask = false;  // K/V rows >= S are loaded and scored
  // No barrier between cp.async completion and reading the tile. In each run each CTA
  // draws (from the run's seed) whether its warps other than warp 0 start late, with
  // probability race_rate, by race_window cycles: warp 0 then reads rows still in flight.
  bool drop_barrier = false;
  int race_window = kDefaultRaceWindowCycles;
  double race_rate = kDefaultRaceRate;
  bool smem_overflow = false;  // V tile rows are written one row further down
};

struct Problem {
  DType dtype = DType::fp16;
  Engine engine = Engine::mma;
  int batch = 1, heads = 1, seq_len = 64, head_dim = 64;
  bool causal = false;
  int block_m = 64, block_n = 64, warps = 4;
  Strides q, k, v, o;
  FaultKnobs knobs;
};

struct DeviceTensors {
  const void* q = nullptr;  // already offset by misalign_bytes when the knob is on
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
};

// True when (dtype, head_dim, block_n, warps) has a compiled kernel.
bool has_kernel(const Problem& p);
// Kernel name used in the launch log, e.g. "fa2_fwd<fp16,d128,bm128,bn64,w4>".
std::string kernel_name(const Problem& p);

// A launch resolved once for a series of runs: the kernel, its name in the launch log,
// grid, block and dynamic shared memory (the opt-in above 48 KB already set).
struct PreparedLaunch {
  const void* fn = nullptr;
  std::string name;
  size_t smem = 0;
  dim3 grid, block;
};
// Throws std::invalid_argument when no kernel is compiled for p, gpu::CudaError.
PreparedLaunch prepare_launch(gpu::Session& s, const Problem& p);
// One checked launch on the default stream (recorded in the launch log); no wait.
void launch_prepared(gpu::Session& s, const PreparedLaunch& l, const Problem& p, const DeviceTensors& t,
                     uint64_t run_seed);

// Launches the kernel (raises the dynamic shared-memory limit first when needed) and
// checks the launch. Does not synchronise. Throws gpu::CudaError. run_seed drives the
// drop-barrier knob's per-CTA draw (ignored without the knob).
void launch_attention(gpu::Session& s, const Problem& p, const DeviceTensors& t, uint64_t run_seed = 0);

// Host conversion of read-back device values to float.
void from_device_format(DType dt, const uint16_t* in, float* out, size_t n);

// Times launch_attention with cudaEvents: `warmup` launches, then `iters` timed ones
// one by one; returns the per-launch milliseconds (on whatever inputs t holds).
std::vector<float> time_attention(gpu::Session& s, const Problem& p, const DeviceTensors& t,
                                  int warmup, int iters);

}  // namespace cudadiag::attention

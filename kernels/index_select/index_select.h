#pragma once
// index_select along S of [B, S, H, D] tensors K and V, restricted to heads h0..h1, on
// the GPU. Plain C++ header; the host side decides the layout (which pointer and which
// strides the gather kernel gets: lib/index_select/index_select_params.h) and the kernels
// honour whatever they are given, as a stride-aware kernel does.
#include <cstdint>
#include <vector>

#include "kernels/runtime/gpu_runtime.h"

namespace cudadiag::index_select {

enum class Dtype { fp16, bf16, fp32 };

struct GatherProblem {
  long long B = 0, S = 0, H = 0, D = 0, h0 = 0, h1 = 0;
  Dtype dtype = Dtype::fp16;
  bool index64 = true;
  bool checked = true;  // device assert on each index (710 when one is out of range)
  // Source of the gather, in elements: the view's pointer offset from the tensor's start
  // and the strides for b, s, h (d is contiguous). With via_copy the heads are first
  // packed into k_contig/v_contig and the strides refer to that copy.
  bool via_copy = false;
  long long base_offset = 0;
  long long stride_b = 0, stride_s = 0, stride_h = 0;
};

// Allocates k, v, idx, [k_contig, v_contig], k_out, v_out from the session (in that
// order), uploads K, V (B*S*H*D elements of raw bits each) and the indices, poisons the
// outputs with 0xFF bytes, runs the gathers, synchronises and downloads the outputs
// ([B, idx.size(), h1-h0, D] each). Throws gpu::CudaError.
void run_gather_pair(gpu::Session& s, const GatherProblem& p, const std::vector<std::uint8_t>& k,
                     const std::vector<std::uint8_t>& v, const std::vector<long long>& idx,
                     std::vector<std::uint8_t>& k_out, std::vector<std::uint8_t>& v_out);

}  // namespace cudadiag::index_select

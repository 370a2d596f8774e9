#pragma once
// CPU side of attention correctness: a float64 reference and the comparison rule
// (relative L2 error against a dtype tolerance; any NaN/Inf fails). Pure C++, so the
// rule is unit-tested without a GPU.
#include <cstddef>
#include <vector>

#include "attention/attention_config.h"
#include "kernels/runtime/run_counters.h"

namespace cudadiag::attention {

// Softmax(Q K^T / sqrt(D)) V in float64. q/k/v hold each tensor's whole extent
// (tensor_extent_elems) laid out with the config's strides; the result is
// contiguous [B, H, S, D].
std::vector<double> attention_reference_cpu(const AttentionConfig& c, const float* q,
                                            const float* k, const float* v);

struct AttentionComparison {
  double rel_err = 0.0;       // ||out - ref||_2 / ||ref||_2 over finite outputs
  size_t non_finite = 0;      // NaN or Inf outputs (the poison shows up here)
  size_t compared = 0;
  long long first_bad_row = -1;  // flat b*H*S + h*S + s of the first row with a NaN or a large error
  size_t ref_non_finite = 0;  // reference elements not finite: the reference itself failed
  bool pass = false;          // rel_err <= tolerance, non_finite == 0 and the reference complete
};

// What a comparison reduces to, whether the CPU or the device (the check kernel's
// RunCounters) reduced it: the rule below judges both alike.
struct AttentionSums {
  double diff2 = 0.0;  // sum of (out - ref)^2 over finite outputs
  double ref2 = 0.0;   // sum of ref^2 over the same elements
  size_t compared = 0;
  size_t non_finite = 0;
  size_t ref_non_finite = 0;
  long long first_non_finite_row = -1;
  long long first_large_row = -1;  // first row whose error exceeds 10x the tolerance
};
AttentionComparison judge_attention(const AttentionSums& s, double tolerance);

// A run's device counters as sums (first_bad packs the flat element index, row * D + d).
AttentionSums attention_sums(const gpu::RunCounters& c, int head_dim);

// The device's fp32 reference against the CPU float64 one, both contiguous [B,H,S,D]:
// ||gpu - cpu|| / ||cpu||. They agree to about 1e-6 (fp32 rounding of exp and the sums);
// kReferenceAgreement leaves 100x headroom, far below any tolerance it guards.
double reference_rel_err(const std::vector<float>& gpu_ref, const std::vector<double>& cpu_ref);
inline constexpr double kReferenceAgreement = 1e-4;

// out: the kernel's output (whole extent, o strides); ref: contiguous [B, H, S, D].
AttentionComparison compare_attention(const AttentionConfig& c, const float* out,
                                      const std::vector<double>& ref, double tolerance);

}  // namespace cudadiag::attention

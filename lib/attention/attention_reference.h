#pragma once
// CPU side of attention correctness: a float64 reference and the comparison rule
// (relative L2 error against a dtype tolerance; any NaN/Inf fails). Pure C++, so the
// rule is unit-tested without a GPU.
#include <cstddef>
#include <vector>

#include "attention/attention_config.h"

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
  bool pass = false;          // rel_err <= tolerance and non_finite == 0
};

// out: the kernel's output (whole extent, o strides); ref: contiguous [B, H, S, D].
AttentionComparison compare_attention(const AttentionConfig& c, const float* out,
                                      const std::vector<double>& ref, double tolerance);

}  // namespace cudadiag::attention

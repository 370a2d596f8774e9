#include "attention/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cudadiag::attention {

std::vector<double> attention_reference_cpu(const AttentionConfig& c, const float* q,
                                            const float* k, const float* v) {
  const int B = c.batch, H = c.heads, S = c.seq_len, D = c.head_dim;
  const auto& qs = c.strides[0];
  const auto& ks = c.strides[1];
  const auto& vs = c.strides[2];
  std::vector<double> out(static_cast<size_t>(B) * H * S * D, 0.0);
  std::vector<double> scores(static_cast<size_t>(S));
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < S; ++i) {
        const float* qr = q + b * qs.batch + h * qs.head + i * qs.seq;
        const int end = c.causal ? i + 1 : S;
        double m = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < end; ++j) {
          const float* kr = k + b * ks.batch + h * ks.head + j * ks.seq;
          double s = 0.0;
          for (int d = 0; d < D; ++d) s += static_cast<double>(qr[d]) * kr[d];
          scores[static_cast<size_t>(j)] = s * scale;
          m = std::max(m, s * scale);
        }
        double sum = 0.0;
        for (int j = 0; j < end; ++j) sum += (scores[static_cast<size_t>(j)] = std::exp(scores[static_cast<size_t>(j)] - m));
        double* o = out.data() + ((static_cast<size_t>(b) * H + h) * S + i) * D;
        for (int j = 0; j < end; ++j) {
          const double p = scores[static_cast<size_t>(j)] / sum;
          const float* vr = v + b * vs.batch + h * vs.head + j * vs.seq;
          for (int d = 0; d < D; ++d) o[d] += p * vr[d];
        }
      }
  return out;
}

AttentionComparison judge_attention(const AttentionSums& s, double tolerance) {
  AttentionComparison r;
  r.compared = s.compared;
  r.non_finite = s.non_finite;
  r.ref_non_finite = s.ref_non_finite;
  r.rel_err = s.ref2 > 0 ? std::sqrt(s.diff2 / s.ref2) : std::sqrt(s.diff2);
  r.pass = s.non_finite == 0 && s.ref_non_finite == 0 && r.rel_err <= tolerance;
  r.first_bad_row = s.first_non_finite_row;
  if (r.first_bad_row < 0 && !r.pass) r.first_bad_row = s.first_large_row;
  return r;
}

AttentionSums attention_sums(const gpu::RunCounters& c, int head_dim) {
  AttentionSums s;
  s.diff2 = c.diff2;
  s.ref2 = c.ref2;
  s.compared = static_cast<size_t>(c.checked);
  s.non_finite = static_cast<size_t>(c.mismatches);
  s.ref_non_finite = static_cast<size_t>(c.ref_non_finite);
  const long long bad = gpu::first_bad_index(c);
  if (bad >= 0 && head_dim > 0) s.first_non_finite_row = bad / head_dim;
  if (c.first_bad_row != gpu::kNoIndex) s.first_large_row = static_cast<long long>(c.first_bad_row);
  return s;
}

AttentionComparison compare_attention(const AttentionConfig& c, const float* out,
                                      const std::vector<double>& ref, double tolerance) {
  const int B = c.batch, H = c.heads, S = c.seq_len, D = c.head_dim;
  const auto& os = c.strides[3];
  AttentionSums sums;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < S; ++i) {
        const long long row = (static_cast<long long>(b) * H + h) * S + i;
        const float* o = out + b * os.batch + h * os.head + i * os.seq;
        const double* e = ref.data() + row * D;
        double row_diff2 = 0.0, row_ref2 = 0.0;
        for (int d = 0; d < D; ++d) {
          ++sums.compared;
          if (!std::isfinite(o[d])) {
            if (sums.non_finite++ == 0) sums.first_non_finite_row = row;
            continue;
          }
          const double x = static_cast<double>(o[d]) - e[d];
          row_diff2 += x * x;
          row_ref2 += e[d] * e[d];
        }
        sums.diff2 += row_diff2;
        sums.ref2 += row_ref2;
        if (sums.first_large_row < 0 && row_diff2 > tolerance * tolerance * std::max(row_ref2, 1e-30) * 100.0)
          sums.first_large_row = row;
      }
  return judge_attention(sums, tolerance);
}

double reference_rel_err(const std::vector<float>& gpu_ref, const std::vector<double>& cpu_ref) {
  if (gpu_ref.size() != cpu_ref.size()) return std::numeric_limits<double>::infinity();
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < cpu_ref.size(); ++i) {
    if (!std::isfinite(gpu_ref[i])) return std::numeric_limits<double>::infinity();
    const double x = static_cast<double>(gpu_ref[i]) - cpu_ref[i];
    diff2 += x * x;
    ref2 += cpu_ref[i] * cpu_ref[i];
  }
  return ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
}

}  // namespace cudadiag::attention

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

AttentionComparison compare_attention(const AttentionConfig& c, const float* out,
                                      const std::vector<double>& ref, double tolerance) {
  const int B = c.batch, H = c.heads, S = c.seq_len, D = c.head_dim;
  const auto& os = c.strides[3];
  AttentionComparison r;
  double diff2 = 0.0, ref2 = 0.0;
  long long first_large = -1;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < S; ++i) {
        const long long row = (static_cast<long long>(b) * H + h) * S + i;
        const float* o = out + b * os.batch + h * os.head + i * os.seq;
        const double* e = ref.data() + row * D;
        double row_diff2 = 0.0, row_ref2 = 0.0;
        for (int d = 0; d < D; ++d) {
          ++r.compared;
          if (!std::isfinite(o[d])) {
            if (r.non_finite++ == 0 && r.first_bad_row < 0) r.first_bad_row = row;
            continue;
          }
          const double x = static_cast<double>(o[d]) - e[d];
          row_diff2 += x * x;
          row_ref2 += e[d] * e[d];
        }
        diff2 += row_diff2;
        ref2 += row_ref2;
        if (first_large < 0 && row_diff2 > tolerance * tolerance * std::max(row_ref2, 1e-30) * 100.0)
          first_large = row;
      }
  r.rel_err = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  r.pass = r.non_finite == 0 && r.rel_err <= tolerance;
  if (r.first_bad_row < 0 && !r.pass) r.first_bad_row = first_large;
  return r;
}

}  // namespace cudadiag::attention

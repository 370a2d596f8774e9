#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "attention/attention_reference.h"

using namespace cudadiag::attention;

namespace {

AttentionConfig small(int s, int d, bool causal) {
  AttentionConfig c;
  c.batch = 2, c.heads = 2, c.seq_len = s, c.head_dim = d, c.causal = causal;
  fill_default_strides(c);
  return c;
}

std::vector<float> random_tensor(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(n);
  for (auto& e : x) e = u(rng);
  return x;
}

// Q, K and V over their whole extents, drawn from seed, seed + 1 and seed + 2.
struct Inputs {
  std::vector<float> q, k, v;
};
Inputs random_inputs(const AttentionConfig& c, unsigned seed) {
  return {random_tensor(tensor_extent_elems(c, 0), seed), random_tensor(tensor_extent_elems(c, 1), seed + 1),
          random_tensor(tensor_extent_elems(c, 2), seed + 2)};
}

}  // namespace

TEST_CASE("reference: a single key gives back its value row", "[attention]") {
  AttentionConfig c = small(1, 64, false);
  const auto [q, k, v] = random_inputs(c, 1);
  const auto out = attention_reference_cpu(c, q.data(), k.data(), v.data());
  for (size_t i = 0; i < out.size(); ++i) CHECK(out[i] == Approx(v[i]));
}

TEST_CASE("reference: causal row 0 equals V row 0, identical keys average V", "[attention]") {
  AttentionConfig c = small(5, 64, true);
  const auto q = random_tensor(tensor_extent_elems(c, 0), 4);
  std::vector<float> k(tensor_extent_elems(c, 1), 0.5f);  // all keys equal: uniform weights
  const auto v = random_tensor(tensor_extent_elems(c, 2), 5);
  const auto out = attention_reference_cpu(c, q.data(), k.data(), v.data());
  const int D = 64;
  for (int d = 0; d < D; ++d) CHECK(out[static_cast<size_t>(d)] == Approx(v[static_cast<size_t>(d)]));
  // Row 3 of (b0,h0): mean of V rows 0..3.
  for (int d = 0; d < D; ++d) {
    double mean = 0;
    for (int j = 0; j < 4; ++j) mean += v[static_cast<size_t>(j * D + d)];
    CHECK(out[static_cast<size_t>(3 * D + d)] == Approx(mean / 4));
  }
}

TEST_CASE("reference honours strides", "[attention]") {
  AttentionConfig dense = small(7, 64, false);
  AttentionConfig padded = dense;
  padded.strides = {};
  for (auto& t : padded.strides) t.seq = 72;
  fill_default_strides(padded);
  const auto [qd, kd, vd] = random_inputs(dense, 6);
  auto spread = [&](const std::vector<float>& x, int t) {
    std::vector<float> y(tensor_extent_elems(padded, t), std::nanf(""));  // padding never read
    for (int r = 0; r < 2 * 2 * 7; ++r)
      for (int d = 0; d < 64; ++d) y[static_cast<size_t>(r * 72 + d)] = x[static_cast<size_t>(r * 64 + d)];
    return y;
  };
  const auto a = attention_reference_cpu(dense, qd.data(), kd.data(), vd.data());
  const auto b = attention_reference_cpu(padded, spread(qd, 0).data(), spread(kd, 1).data(), spread(vd, 2).data());
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == b[i]);
}

TEST_CASE("comparison: tolerance, NaN never passes", "[attention]") {
  AttentionConfig c = small(9, 64, false);
  const auto [q, k, v] = random_inputs(c, 9);
  const auto ref = attention_reference_cpu(c, q.data(), k.data(), v.data());
  std::vector<float> out(ref.begin(), ref.end());
  auto same = compare_attention(c, out.data(), ref, kToleranceFp16);
  CHECK(same.pass);
  CHECK(same.rel_err < 1e-6);
  CHECK(same.compared == ref.size());

  // 0.1% relative error passes both tolerances; 0.5% fails fp16 (2e-3) and passes bf16 (1e-2).
  std::vector<float> close = out;
  for (auto& x : close) x *= 1.001f;
  CHECK(compare_attention(c, close.data(), ref, kToleranceFp16).pass);
  std::vector<float> off = out;
  for (auto& x : off) x *= 1.005f;
  const auto r_off = compare_attention(c, off.data(), ref, kToleranceFp16);
  CHECK_FALSE(r_off.pass);
  CHECK(r_off.rel_err == Approx(0.005).epsilon(0.01));
  CHECK(compare_attention(c, off.data(), ref, kToleranceBf16).pass);

  std::vector<float> one_row_wrong = out;
  for (int d = 0; d < 64; ++d) one_row_wrong[static_cast<size_t>(5 * 64 + d)] = 0.f;
  const auto r_row = compare_attention(c, one_row_wrong.data(), ref, kToleranceBf16);
  CHECK_FALSE(r_row.pass);
  CHECK(r_row.first_bad_row == 5);

  std::vector<float> poisoned = out;
  poisoned[100] = std::numeric_limits<float>::quiet_NaN();
  const auto r_nan = compare_attention(c, poisoned.data(), ref, 1.0);  // even with a huge tolerance
  CHECK_FALSE(r_nan.pass);
  CHECK(r_nan.non_finite == 1);
  CHECK(r_nan.first_bad_row == 1);
}

TEST_CASE("judge: the device's sums and the CPU's comparison follow one rule", "[attention]") {
  AttentionSums s;
  s.diff2 = 1e-6, s.ref2 = 1.0, s.compared = 64;
  CHECK(judge_attention(s, kToleranceFp16).pass);            // rel err 1e-3 <= 2e-3
  s.diff2 = 1e-4;                                            // rel err 1e-2
  auto r = judge_attention(s, kToleranceFp16);
  CHECK_FALSE(r.pass);
  CHECK(r.rel_err == Approx(1e-2));
  CHECK(r.first_bad_row == -1);                              // no row was flagged
  s.first_large_row = 5;
  CHECK(judge_attention(s, kToleranceFp16).first_bad_row == 5);
  s.diff2 = 0, s.non_finite = 1, s.first_non_finite_row = 2;  // NaN wins over the norm and names its row
  r = judge_attention(s, kToleranceFp16);
  CHECK_FALSE(r.pass);
  CHECK(r.first_bad_row == 2);
  AttentionSums broken_ref;
  broken_ref.ref2 = 1.0, broken_ref.ref_non_finite = 3;       // the reference itself failed
  CHECK_FALSE(judge_attention(broken_ref, kToleranceFp16).pass);
}

TEST_CASE("judge: device counters map to sums, the packed first element to its row", "[attention]") {
  cudadiag::gpu::RunCounters c;
  c.diff2 = 2.0, c.ref2 = 8.0, c.checked = 640, c.mismatches = 3;
  c.first_bad = (static_cast<unsigned long long>(3 * 64 + 17) << 32) | 0xFFFFu;  // row 3, d 17, NaN bits
  c.first_bad_row = 7;
  const auto s = attention_sums(c, 64);
  CHECK(s.compared == 640);
  CHECK(s.non_finite == 3);
  CHECK(s.first_non_finite_row == 3);
  CHECK(s.first_large_row == 7);
  const auto r = judge_attention(s, kToleranceFp16);
  CHECK(r.rel_err == Approx(0.5));
  CHECK(r.first_bad_row == 3);
  cudadiag::gpu::RunCounters clean;
  const auto z = attention_sums(clean, 64);
  CHECK(z.first_non_finite_row == -1);
  CHECK(z.first_large_row == -1);
}

TEST_CASE("reference agreement: fp32 rounding passes, a wrong or missing element does not", "[attention]") {
  AttentionConfig c = small(11, 64, true);
  const auto [q, k, v] = random_inputs(c, 21);
  const auto cpu = attention_reference_cpu(c, q.data(), k.data(), v.data());
  std::vector<float> gpu(cpu.begin(), cpu.end());  // rounded to fp32: what a correct device reference gives
  CHECK(reference_rel_err(gpu, cpu) < 1e-6);
  CHECK(reference_rel_err(gpu, cpu) <= kReferenceAgreement);
  gpu[5] += 0.5f;
  CHECK(reference_rel_err(gpu, cpu) > kReferenceAgreement);
  gpu[5] = std::nanf("");
  CHECK(std::isinf(reference_rel_err(gpu, cpu)));
  CHECK(std::isinf(reference_rel_err(std::vector<float>(3), cpu)));
}

// The counter-based generator behind device-side inputs: a pure function of (seed,
// stream, index) that the host evaluates exactly as the device does.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "kernels/runtime/counter_rng.h"
#include "kernels/runtime/device_fill.h"

using namespace cudadiag;

TEST_CASE("uniform values lie in -1..1 on a 2^-23 grid and cover the range", "[rng]") {
  double sum = 0, lo = 1, hi = -1;
  for (uint64_t i = 0; i < 100000; ++i) {
    const float x = rng::uniform_pm1(rng::element_bits(42, 1, i));
    REQUIRE(x >= -1.0f);
    REQUIRE(x < 1.0f);
    REQUIRE(std::ldexp(static_cast<double>(x) + 1.0, 23) == std::floor(std::ldexp(static_cast<double>(x) + 1.0, 23)));
    sum += x, lo = std::min(lo, double(x)), hi = std::max(hi, double(x));
  }
  CHECK(std::abs(sum / 100000) < 0.01);  // mean 0 within ~3 sigma (sigma 0.0018)
  CHECK(lo < -0.999);
  CHECK(hi > 0.999);
}

TEST_CASE("seeds, streams and elements get different values, the same triple the same one", "[rng]") {
  CHECK(rng::element_bits(7, 1, 5) == rng::element_bits(7, 1, 5));
  std::set<uint64_t> seen;
  for (uint64_t seed : {1ull, 2ull})
    for (uint32_t stream : {1u, 2u, 3u})
      for (uint64_t i = 0; i < 100; ++i) seen.insert(rng::element_bits(seed, stream, i));
  CHECK(seen.size() == 600);
}

TEST_CASE("fault inputs are never zero and scale exactly", "[rng]") {
  for (uint64_t i = 0; i < 20000; ++i) {
    const float x = gpu::fill_value_f32(3, 0, i, 8.0f);
    REQUIRE(x != 0.0f);
    REQUIRE(std::abs(x) <= 8.0f);
    const float u = rng::uniform_pm1(rng::element_bits(3, 0, i));
    if (u != 0.0f) REQUIRE(x == 8.0f * u);
  }
}

TEST_CASE("the per-CTA draw in 0..1 hits a rate as asked", "[rng]") {
  int hits = 0;
  for (uint64_t cta = 0; cta < 100000; ++cta) {
    const float u = rng::uniform_01(rng::element_bits(5, 0x7ace, cta));
    REQUIRE(u >= 0.0f);
    REQUIRE(u < 1.0f);
    hits += u < 0.05f;
  }
  CHECK(hits > 4700);  // 5000 expected, sigma 69
  CHECK(hits < 5300);
}

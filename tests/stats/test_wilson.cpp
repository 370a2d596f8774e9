#include <catch2/catch.hpp>

#include <stdexcept>

#include "stats/wilson.h"

using cudadiag::stats::wilson_interval;

TEST_CASE("Wilson interval matches published values", "[wilson]") {
  // Reference values: Newcombe (1998), and statsmodels proportion_confint(method="wilson").
  auto i0 = wilson_interval(0, 100);
  CHECK(i0.low == 0.0);
  CHECK(i0.high == Approx(0.0370).margin(1e-4));

  auto i5 = wilson_interval(5, 100);
  CHECK(i5.low == Approx(0.0215).margin(1e-4));
  CHECK(i5.high == Approx(0.1118).margin(1e-4));

  auto i50 = wilson_interval(50, 100);
  CHECK(i50.low == Approx(0.4038).margin(1e-4));
  CHECK(i50.high == Approx(0.5962).margin(1e-4));

  auto i100 = wilson_interval(100, 100);
  CHECK(i100.low == Approx(1.0 - 0.0370).margin(1e-4));
  CHECK(i100.high == 1.0);

  // 1 of 10: [0.0179, 0.4042]
  auto i1 = wilson_interval(1, 10);
  CHECK(i1.low == Approx(0.0179).margin(1e-4));
  CHECK(i1.high == Approx(0.4042).margin(1e-4));
}

TEST_CASE("Wilson interval narrows with more trials and contains the estimate", "[wilson]") {
  const auto small = wilson_interval(2, 20);
  const auto large = wilson_interval(200, 2000);
  CHECK((large.high - large.low) < (small.high - small.low));
  CHECK(large.low < 0.1);
  CHECK(large.high > 0.1);
}

TEST_CASE("Wilson interval edge cases", "[wilson]") {
  const auto none = wilson_interval(0, 0);
  CHECK(none.low == 0.0);
  CHECK(none.high == 1.0);
  CHECK_THROWS_AS(wilson_interval(5, 4), std::invalid_argument);
  CHECK_THROWS_AS(wilson_interval(-1, 4), std::invalid_argument);
  CHECK_THROWS_AS(wilson_interval(0, -1), std::invalid_argument);
}

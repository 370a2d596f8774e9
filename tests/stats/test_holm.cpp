#include <catch2/catch.hpp>

#include <stdexcept>

#include "stats/holm.h"

using cudadiag::stats::holm;

TEST_CASE("Holm: the textbook example", "[holm]") {
  // Holm (1979)-style worked example: four p-values at alpha 0.05.
  // Sorted: 0.01 (level 0.0125, significant), 0.02 (0.0167, not: stops), 0.03, 0.04.
  const auto d = holm({0.04, 0.01, 0.03, 0.02}, 4, 0.05);
  REQUIRE(d.size() == 4);
  CHECK(d[1].significant);
  CHECK(d[1].level == Approx(0.05 / 4));
  CHECK_FALSE(d[3].significant);
  CHECK(d[3].level == Approx(0.05 / 3));
  // 0.03 < 0.05 / 2 is false anyway; 0.04 < 0.05 would pass alone, but Holm stopped.
  CHECK_FALSE(d[2].significant);
  CHECK_FALSE(d[0].significant);
  CHECK(d[0].level == Approx(0.05));
}

TEST_CASE("Holm: untested hypotheses of the family count", "[holm]") {
  // One test among 49 cases compared: p = 0.042 is no finding at 0.05 / 49.
  auto d = holm({0.042}, 49, 0.05);
  CHECK_FALSE(d[0].significant);
  CHECK(d[0].level == Approx(0.05 / 49));
  // The same p alone in its family is.
  d = holm({0.042}, 1, 0.05);
  CHECK(d[0].significant);
  // Every p far below its level: all significant, levels rising.
  d = holm({1e-9, 1e-8, 1e-7}, 3, 0.05);
  CHECK((d[0].significant && d[1].significant && d[2].significant));
  CHECK(d[2].level == Approx(0.05));
}

TEST_CASE("Holm: more powerful than Bonferroni, never less", "[holm]") {
  // 0.02 misses Bonferroni's 0.05 / 2 = 0.025? No: 0.02 < 0.025. Take 0.03 instead:
  // Bonferroni rejects only 0.001; Holm also rejects 0.03 < 0.05 / 1.
  const auto d = holm({0.001, 0.03}, 2, 0.05);
  CHECK(d[0].significant);
  CHECK(d[1].significant);
  CHECK(d[1].level == Approx(0.05));
}

TEST_CASE("Holm: bad input is refused", "[holm]") {
  CHECK_THROWS_AS(holm({0.1, 0.2}, 1, 0.05), std::invalid_argument);
  CHECK_THROWS_AS(holm({0.1}, 1, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(holm({1.5}, 1, 0.05), std::invalid_argument);
  CHECK_THROWS_AS(holm({-0.1}, 1, 0.05), std::invalid_argument);
  CHECK(holm({}, 0, 0.05).empty());
}

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "stats/fisher.h"

using cudadiag::stats::fisher_exact;
using cudadiag::stats::fisher_two_sided;
using cudadiag::stats::log_choose;

// Reference values computed exactly with rational arithmetic (Python fractions),
// the same definition R's fisher.test uses: sum of the tables no more likely than
// the observed one.
TEST_CASE("fisher: one failure in a hundred against none is not significant", "[fisher]") {
  CHECK(fisher_two_sided(1, 100, 0, 100) == Approx(1.0));
}

TEST_CASE("fisher: known two-sided p-values", "[fisher]") {
  CHECK(fisher_two_sided(10, 100, 0, 100) == Approx(0.0015420521254357006).epsilon(1e-9));
  CHECK(fisher_two_sided(3, 10, 0, 10) == Approx(0.21052631578947367).epsilon(1e-9));
  CHECK(fisher_two_sided(3, 50, 4, 50) == Approx(1.0).epsilon(1e-9));
  CHECK(fisher_two_sided(0, 5, 5, 5) == Approx(0.007936507936507936).epsilon(1e-9));
}

TEST_CASE("fisher: counts in the hundreds stay finite and exact", "[fisher]") {
  CHECK(fisher_two_sided(150, 300, 120, 300) == Approx(0.01724816836995109).epsilon(1e-7));
  CHECK(fisher_two_sided(2, 500, 15, 500) == Approx(0.002167464332780369).epsilon(1e-7));
  const double p = fisher_two_sided(2500, 5000, 2400, 5000);
  CHECK(p > 0.0);
  CHECK(p < 0.05);
}

TEST_CASE("fisher: symmetric in the hosts", "[fisher]") {
  CHECK(fisher_two_sided(7, 40, 1, 35) == Approx(fisher_two_sided(1, 35, 7, 40)));
  const auto r = fisher_exact(10, 100, 0, 100);
  const auto s = fisher_exact(0, 100, 10, 100);
  CHECK(r.p_greater == Approx(s.p_less));
  CHECK(r.p_greater < r.p_two_sided);
  CHECK(r.p_less == Approx(1.0));
}

TEST_CASE("fisher: degenerate tables give p = 1", "[fisher]") {
  CHECK(fisher_two_sided(0, 0, 0, 0) == 1.0);
  CHECK(fisher_two_sided(0, 20, 0, 30) == 1.0);
  CHECK(fisher_two_sided(20, 20, 30, 30) == 1.0);
}

TEST_CASE("fisher: impossible counts are rejected", "[fisher]") {
  CHECK_THROWS_AS(fisher_two_sided(5, 4, 0, 4), std::invalid_argument);
  CHECK_THROWS_AS(fisher_two_sided(-1, 4, 0, 4), std::invalid_argument);
  CHECK_THROWS_AS(fisher_two_sided(0, 4, 1, -3), std::invalid_argument);
}

TEST_CASE("fisher: log_choose matches small binomials", "[fisher]") {
  CHECK(std::exp(log_choose(10, 3)) == Approx(120.0));
  CHECK(log_choose(7, 0) == Approx(0.0).margin(1e-12));
  CHECK_THROWS_AS(log_choose(3, 4), std::invalid_argument);
}

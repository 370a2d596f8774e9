#include <catch2/catch.hpp>

#include "stats/rate_text.h"

using namespace cudadiag::stats;

TEST_CASE("one way to print a rate and its interval: whole percent, 0 and 100 only when exact") {
  CHECK(rate_text(4, 10, wilson_interval(4, 10)) == "4/10 failed (40%, 95% CI 17-69%)");
  CHECK(rate_text(1, 1, wilson_interval(1, 1)) == "1/1 failed (100%, 95% CI 21-100%)");
  CHECK(rate_text(0, 20, wilson_interval(0, 20)) == "0/20 failed (0%, 95% CI 0-16%)");
  // Near the ends a whole percent would say 0 or 100: one decimal instead.
  CHECK(percent_text(0.004) == "0.4%");
  CHECK(percent_text(0.996) == "99.6%");
  CHECK(percent_text(0.0) == "0%");
  CHECK(percent_text(1.0) == "100%");
  CHECK(interval_text(wilson_interval(1, 1000)) == "95% CI 0.02-1%");
  CHECK(percent_text(0.9999) == "99.99%");
  CHECK(rate_text(0, 0, wilson_interval(0, 0)) == "0/0 failed (0%, 95% CI 0-100%)");
}

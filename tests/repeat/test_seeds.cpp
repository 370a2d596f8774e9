#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>

#include "repeat/seeds.h"

using namespace cudadiag::repeat;

TEST_CASE("seeds parse as decimal or 0x-prefixed hex, whole words only", "[seed]") {
  CHECK(parse_seed("0") == 0u);
  CHECK(parse_seed("12345") == 12345u);
  CHECK(parse_seed("0x1f") == 31u);
  CHECK(parse_seed("0XFFFFFFFFFFFFFFFF") == 0xFFFFFFFFFFFFFFFFull);
  CHECK(parse_seed("18446744073709551615") == 0xFFFFFFFFFFFFFFFFull);
  CHECK_FALSE(parse_seed("18446744073709551616"));  // one past 64 bits
  CHECK_FALSE(parse_seed(""));
  CHECK_FALSE(parse_seed("0x"));
  CHECK_FALSE(parse_seed("-1"));
  CHECK_FALSE(parse_seed("12ab"));
  CHECK_FALSE(parse_seed(" 12"));
}

TEST_CASE("a formatted seed parses back to itself, and the replay hint names the flag", "[seed]") {
  for (uint64_t s : {0ull, 1ull, 0x9e3779b97f4a7c15ull, ~0ull}) {
    const std::string text = format_seed(s);
    CHECK(text.size() == 18);
    CHECK(text.rfind("0x", 0) == 0);
    CHECK(parse_seed(text) == s);
  }
  CHECK(replay_hint(0x2a) == "--replay 0x000000000000002a");
}

TEST_CASE("the seed flags become one typed request, parsed once", "[seed]") {
  CHECK_FALSE(seed_request("", ""));
  CHECK(seed_request("7", "") == SeedRequest{SeedRequest::Kind::series, 7});
  CHECK(seed_request("", "0x10") == SeedRequest{SeedRequest::Kind::replay, 16});
  CHECK_THROWS_WITH(seed_request("-3", ""), Catch::Contains("--seed: '-3' is not a seed"));
  CHECK_THROWS_WITH(seed_request("", "xyz"), Catch::Contains("--replay: 'xyz' is not a seed"));
  CHECK_THROWS_WITH(seed_request("1", "2"), Catch::Contains("--seed and --replay"));
}

TEST_CASE("the runs of a series get distinct seeds, and another base other ones", "[seed]") {
  std::set<uint64_t> runs;
  for (uint64_t r = 0; r < 1000; ++r) runs.insert(series_seed(99, r));
  CHECK(runs.size() == 1000);
  CHECK(series_seed(99, 0) != series_seed(100, 0));
  CHECK(series_seed(99, 0) != 99);  // run 0 is not the base itself: the base names the series
  CHECK(series_seed(5, 3) == series_seed(5, 3));
}

#include <catch2/catch.hpp>

#include "cases/run_seed.h"

using namespace cudadiag::cases;

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

TEST_CASE("a formatted seed parses back to itself", "[seed]") {
  for (uint64_t s : {0ull, 1ull, 0x9e3779b97f4a7c15ull, ~0ull}) {
    const std::string text = format_seed(s);
    CHECK(text.size() == 18);
    CHECK(text.rfind("0x", 0) == 0);
    CHECK(parse_seed(text) == s);
  }
}

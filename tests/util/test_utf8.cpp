#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "util/utf8.h"

using cudadiag::to_valid_utf8;
using cudadiag::utf8_prefix;

TEST_CASE("valid UTF-8 comes back unchanged") {
  const std::string s = "plain ascii, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80";
  CHECK(to_valid_utf8(s) == s);
  CHECK(to_valid_utf8("") == "");
}

TEST_CASE("invalid bytes become U+FFFD, one per stray byte or ill-formed sequence") {
  CHECK(to_valid_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(to_valid_utf8("\xFF\x80\xFE") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // stray bytes
  CHECK(to_valid_utf8("\xC3") == "\xEF\xBF\xBD");                       // truncated sequence
  CHECK(to_valid_utf8("\xE2\x82" "A") == "\xEF\xBF\xBD" "A");            // cut short by 'A'
  CHECK(to_valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD");                   // overlong '/'
  CHECK(to_valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD");               // surrogate
  CHECK(to_valid_utf8("\xED\xA0\x80\xE2\x82\xAC") == "\xEF\xBF\xBD\xE2\x82\xAC");  // then a valid euro
  CHECK(to_valid_utf8("\xF4\x90\x80\x80").find("\xF4") == std::string::npos);   // > U+10FFFF
  const std::string nul("x\0y", 3);
  CHECK(to_valid_utf8(nul) == nul);  // NUL is valid UTF-8; JSON escapes it
}

TEST_CASE("the result of any byte soup is accepted by the JSON writer") {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 131 + 7) & 0xFF);
  const std::string clean = to_valid_utf8(junk);
  CHECK_NOTHROW(nlohmann::json(clean).dump());
  CHECK_THROWS(nlohmann::json(junk).dump());  // what would happen without it
}

TEST_CASE("utf8_prefix cuts at a code point boundary") {
  const std::string s = "ab\xE2\x82\xAC" "cd";  // "ab€cd"
  CHECK(utf8_prefix(s, 100) == s);
  CHECK(utf8_prefix(s, 2) == "ab");
  CHECK(utf8_prefix(s, 3) == "ab");
  CHECK(utf8_prefix(s, 4) == "ab");
  CHECK(utf8_prefix(s, 5) == "ab\xE2\x82\xAC");
  CHECK(utf8_prefix("\xFF\xFF\xFF\xFF", 2) == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

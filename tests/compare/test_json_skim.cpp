#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "compare/json_skim.h"

using namespace cudadiag::compare;

namespace {

// True when the skimmer accepts the whole text as one JSON document.
bool skim_accepts(const std::string& text) {
  try {
    JsonSkim s(text);
    s.skip();
    s.finish();
    return true;
  } catch (const JsonSyntaxError&) {
    return false;
  }
}

std::size_t error_offset(const std::string& text) {
  try {
    JsonSkim s(text);
    s.skip();
    s.finish();
  } catch (const JsonSyntaxError& e) {
    return e.offset();
  }
  return std::string::npos;
}

const char* kSample = R"({
  "schema_version": "1.0.0",
  "tool": {"name": "cudadiag", "arch": ["sm_80", "sm_90"], "n": -12.5e+3, "ok": true, "none": null},
  "results": [
    {"case_id": "fa.seed", "params": {"b": 1, "a": [0, 1.25, -0]}, "text": "tab\t\"quoted\" \u00e9 \\ /"},
    {"case_id": "k\"ey", "repeats": {"runs": 50, "failures": 0}}
  ],
  "empty": {}, "nothing": []
})";

}  // namespace

TEST_CASE("json skim: walks objects and arrays and hands out exact slices", "[compare][skim]") {
  const std::string text = kSample;
  JsonSkim s(text);
  s.enter_object();
  std::string key;
  std::vector<std::string> keys;
  while (s.next_member(key)) {
    keys.push_back(key);
    if (key == "tool") {
      const auto slice = s.slice();
      CHECK(nlohmann::json::parse(slice)["n"] == -12500.0);
    } else if (key == "results") {
      s.enter_array();
      int n = 0;
      while (s.next_element()) {
        s.enter_object();
        while (s.next_member(key)) {
          if (key == "case_id" && n == 1) CHECK(nlohmann::json::parse(s.slice()) == "k\"ey");
          else s.skip();
        }
        ++n;
      }
      CHECK(n == 2);
    } else {
      s.skip();
    }
  }
  s.finish();
  CHECK(keys == std::vector<std::string>{"schema_version", "tool", "results", "empty", "nothing"});
}

TEST_CASE("json skim: escaped member names are decoded", "[compare][skim]") {
  const std::string text = R"({"a\u0062\"c": 1})";
  JsonSkim s(text);
  s.enter_object();
  std::string key;
  REQUIRE(s.next_member(key));
  CHECK(key == "ab\"c");
  CHECK(s.peek() == JsonKind::number);
  s.skip();
  CHECK_FALSE(s.next_member(key));
}

TEST_CASE("json skim: errors point at the character that broke the document", "[compare][skim]") {
  CHECK(error_offset("{\"a\": 1,}") == 8);
  CHECK(error_offset("{,}") == 1);
  CHECK(error_offset("[1 2]") == 3);
  CHECK(error_offset("{\"a\" 1}") == 5);
  CHECK(error_offset("[01]") == 2);
  CHECK(error_offset("[-]") == 2);
  CHECK(error_offset("[1.]") == 3);
  CHECK(error_offset("[1e]") == 3);
  CHECK(error_offset("[tru]") == 1);
  CHECK(error_offset("[\"a\\x\"]") == 4);
  CHECK(error_offset("[\"\\u12G4\"]") == 6);
  CHECK(error_offset("[\"a\nb\"]") == 3);
  CHECK(error_offset("{} x") == 3);
  // The end of the input: the offset is the text's length, and the reason says so.
  const std::string truncated = std::string(kSample).substr(0, 100);
  CHECK(error_offset(truncated) == truncated.size());
  try {
    JsonSkim s(truncated);
    s.skip();
    FAIL("accepted a truncated document");
  } catch (const JsonSyntaxError& e) {
    CHECK_THAT(e.what(), Catch::Contains("unexpected end of input"));
  }
  CHECK(error_offset("") == 0);
  CHECK(error_offset("   ") == 3);
}

TEST_CASE("json skim: nesting beyond the limit is refused, not recursed into", "[compare][skim]") {
  STATIC_REQUIRE(JsonSkim::kMaxDepth == cudadiag::report::kMaxJsonDepth);
  const std::size_t deep = JsonSkim::kMaxDepth + 1;
  const std::string text = std::string(deep, '[') + std::string(deep, ']');
  try {
    JsonSkim s(text);
    s.skip();
    FAIL("accepted nesting deeper than the limit");
  } catch (const JsonSyntaxError& e) {
    CHECK_THAT(e.what(), Catch::Contains("nested deeper than"));
    CHECK(e.offset() == JsonSkim::kMaxDepth);
  }
  const std::string fine = std::string(JsonSkim::kMaxDepth, '[') + std::string(JsonSkim::kMaxDepth, ']');
  CHECK(skim_accepts(fine));
  // A million brackets: refused early, no stack overflow.
  CHECK_FALSE(skim_accepts(std::string(1000000, '[')));
}

TEST_CASE("json skim: accepts exactly what nlohmann accepts (ASCII mutations)", "[compare][skim]") {
  // Each mutation replaces, inserts or deletes one character of a valid document.
  const std::string base = kSample;
  const std::string alphabet = "{}[]:,\"\\ \n0123456789.-+eEtrufalsn/abu";
  std::mt19937 rng(20261123);
  int agreed = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string t = base;
    const std::size_t at = rng() % t.size();
    const char c = alphabet[rng() % alphabet.size()];
    switch (rng() % 3) {
      case 0: t[at] = c; break;
      case 1: t.insert(t.begin() + static_cast<std::ptrdiff_t>(at), c); break;
      default: t.erase(at, 1); break;
    }
    const bool theirs = nlohmann::json::accept(t);
    INFO("mutation " << i << ": " << t);
    REQUIRE(skim_accepts(t) == theirs);
    ++agreed;
    rejected += !theirs;
  }
  CHECK(agreed == 20000);
  CHECK(rejected > 5000);  // the mutations exercise the error paths, not only valid text
}

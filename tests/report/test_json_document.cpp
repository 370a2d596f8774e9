// The one JSON loader for outside input: hostile documents become InputError naming the
// source and the position, never a crash or an internal error.
#include <catch2/catch.hpp>

#include <string>

#include "report/json_document.h"
#include "util/errors.h"

using cudadiag::InputError;
using cudadiag::report::kMaxJsonDepth;
using cudadiag::report::parse_json_document;

namespace {

std::string rejection(const std::string& text, const std::string& source = "in.json") {
  try {
    parse_json_document(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

}  // namespace

TEST_CASE("json_document: a 100000-level document is refused before it can overflow the stack", "[json_document]") {
  const std::string text = "{\"a\":" + nested(100000) + ",\"b\":1}";
  const auto msg = rejection(text, "deep.json");
  CHECK_THAT(msg, Catch::StartsWith("deep.json: line 1, column "));
  CHECK_THAT(msg, Catch::Contains("nested deeper than 128 levels"));
}

TEST_CASE("json_document: nesting up to the limit is read, one more level is not", "[json_document]") {
  CHECK(parse_json_document(nested(kMaxJsonDepth), "ok.json").is_array());
  CHECK_THAT(rejection(nested(kMaxJsonDepth + 1)), Catch::Contains("nested deeper"));
  // Brackets inside strings are text, not nesting.
  const std::string brackets = "{\"s\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  CHECK(parse_json_document(brackets, "s.json")["s"].get<std::string>().size() == 2001);
}

TEST_CASE("json_document: numbers a double cannot hold are refused with their position", "[json_document]") {
  CHECK_THAT(rejection("{\n  \"x\": 1e999\n}", "big.json"),
             Catch::StartsWith("big.json: line 2, column 8") && Catch::Contains("1e999 is out of range"));
  CHECK_THAT(rejection("[-1e999]"), Catch::Contains("-1e999 is out of range"));
  CHECK_THAT(rejection("[" + std::string(400, '9') + "]"), Catch::Contains("out of range") && Catch::Contains("..."));
  // What a double holds is read, including integers past 64 bits and underflow to 0.
  CHECK(parse_json_document("[1e308, 1e-999, 18446744073709551616]", "n.json")[1].get<double>() == 0.0);
}

TEST_CASE("json_document: syntax errors, truncation and invalid UTF-8 name line and column", "[json_document]") {
  CHECK_THAT(rejection("{\n  \"a\": ,\n}", "bad.json"),
             Catch::StartsWith("bad.json: line 2, column 8") && Catch::Contains("malformed JSON"));
  CHECK_THAT(rejection("{\"a\": [1, 2"), Catch::Contains("the file looks truncated"));
  CHECK_THAT(rejection("{\"a\": \"\xff\"}"), Catch::Contains("malformed JSON") && Catch::Contains("UTF-8"));
  CHECK_THAT(rejection(""), Catch::Contains("line 1, column 1"));
}

TEST_CASE("json_document: standard input is named <stdin>", "[json_document]") {
  CHECK(cudadiag::report::source_name("-") == "<stdin>");
  CHECK(cudadiag::report::source_name("a.json") == "a.json");
  CHECK(cudadiag::report::text_position("ab\ncd", 4) == "line 2, column 2 (byte 4)");
}

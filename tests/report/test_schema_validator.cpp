// The JSON Schema validator: each supported keyword accepts good input and rejects bad
// input with a message that starts with the JSON pointer of the offending value.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "report/schema.h"

using cudadiag::report::json;
using cudadiag::report::validate;

namespace {

json schema_of(const char* text) { return json::parse(text); }

// The single violation of `doc`, or a failed check when there is not exactly one.
std::string only_error(const json& doc, const json& schema) {
  const auto errors = validate(doc, schema);
  INFO("errors: " << json(errors).dump());
  REQUIRE(errors.size() == 1);
  return errors[0];
}

}  // namespace

TEST_CASE("type accepts matching values and names the expected and actual type", "[schema]") {
  const auto s = schema_of(R"({"type": "string"})");
  CHECK(validate(json("x"), s).empty());
  CHECK(only_error(json(3), s) == "/: expected string, got integer");
  CHECK(only_error(json(nullptr), s) == "/: expected string, got null");
}

TEST_CASE("type integer accepts integral floats and rejects fractions", "[schema]") {
  const auto s = schema_of(R"({"type": "integer"})");
  CHECK(validate(json(4), s).empty());
  CHECK(validate(json(4.0), s).empty());
  CHECK(only_error(json(4.5), s) == "/: expected integer, got number");
  CHECK(only_error(json("4"), s) == "/: expected integer, got string");
}

TEST_CASE("type as an array of names accepts any of them", "[schema]") {
  const auto s = schema_of(R"({"type": ["boolean", "null"]})");
  CHECK(validate(json(true), s).empty());
  CHECK(validate(json(nullptr), s).empty());
  CHECK(only_error(json("yes"), s) == "/: expected boolean or null, got string");
}

TEST_CASE("properties validate present members at their pointer", "[schema]") {
  const auto s = schema_of(R"({"type": "object", "properties": {"a": {"type": "integer"}}})");
  CHECK(validate(json::parse(R"({"a": 1})"), s).empty());
  CHECK(validate(json::parse(R"({})"), s).empty());
  CHECK(only_error(json::parse(R"({"a": "1"})"), s) == "/a: expected integer, got string");
}

TEST_CASE("property names with / and ~ are escaped in pointers", "[schema]") {
  const auto s = schema_of(R"({"properties": {"a/b~c": {"type": "integer"}}})");
  CHECK(only_error(json::parse(R"({"a/b~c": true})"), s) == "/a~1b~0c: expected integer, got boolean");
}

TEST_CASE("required names the missing property at the object's pointer", "[schema]") {
  const auto s = schema_of(R"({"properties": {"o": {"required": ["x", "y"]}}})");
  CHECK(validate(json::parse(R"({"o": {"x": 1, "y": 2}})"), s).empty());
  CHECK(only_error(json::parse(R"({"o": {"x": 1}})"), s) == "/o: missing required property 'y'");
}

TEST_CASE("additionalProperties false rejects undeclared members", "[schema]") {
  const auto s = schema_of(R"({"properties": {"a": {}}, "additionalProperties": false})");
  CHECK(validate(json::parse(R"({"a": 1})"), s).empty());
  CHECK(only_error(json::parse(R"({"a": 1, "b": 2})"), s) == "/: property 'b' is not allowed");
}

TEST_CASE("additionalProperties as a schema checks undeclared members", "[schema]") {
  const auto s = schema_of(R"({"properties": {"n": {"type": "integer"}},
                               "additionalProperties": {"type": "string"}})");
  CHECK(validate(json::parse(R"({"n": 1, "CUDA_X": "1"})"), s).empty());
  CHECK(only_error(json::parse(R"({"n": 1, "CUDA_X": 1})"), s) == "/CUDA_X: expected string, got integer");
}

TEST_CASE("items checks every element at its index", "[schema]") {
  const auto s = schema_of(R"({"type": "array", "items": {"type": "integer", "minimum": 1}})");
  CHECK(validate(json::parse("[1, 2, 3]"), s).empty());
  CHECK(only_error(json::parse("[1, 0, 3]"), s) == "/1: 0 is less than the minimum 1");
}

TEST_CASE("prefixItems checks leading elements; items the rest", "[schema]") {
  const auto s = schema_of(R"({"prefixItems": [{"type": "string"}, {"type": "integer"}],
                               "items": {"type": "boolean"}})");
  CHECK(validate(json::parse(R"(["a", 1, true, false])"), s).empty());
  CHECK(only_error(json::parse(R"(["a", "b"])"), s) == "/1: expected integer, got string");
  CHECK(only_error(json::parse(R"(["a", 1, 2])"), s) == "/2: expected boolean, got integer");
}

TEST_CASE("minItems and maxItems bound the length", "[schema]") {
  const auto s = schema_of(R"({"minItems": 3, "maxItems": 3})");
  CHECK(validate(json::parse("[1, 1, 1]"), s).empty());
  CHECK(only_error(json::parse("[1, 1]"), s) == "/: has 2 items, fewer than the minimum 3");
  CHECK(only_error(json::parse("[1, 1, 1, 1]"), s) == "/: has 4 items, more than the maximum 3");
}

TEST_CASE("enum lists the allowed values", "[schema]") {
  const auto s = schema_of(R"({"properties": {"outcome": {"enum": ["ok", "mismatch", 3]}}})");
  CHECK(validate(json::parse(R"({"outcome": "ok"})"), s).empty());
  CHECK(validate(json::parse(R"({"outcome": 3})"), s).empty());
  CHECK(only_error(json::parse(R"({"outcome": "bogus"})"), s) ==
        "/outcome: 'bogus' is not one of ['ok', 'mismatch', 3]");
}

TEST_CASE("const requires one exact value", "[schema]") {
  const auto s = schema_of(R"({"const": "cudadiag"})");
  CHECK(validate(json("cudadiag"), s).empty());
  CHECK(only_error(json("other"), s) == "/: expected 'cudadiag', got 'other'");
}

TEST_CASE("pattern is an unanchored ECMAScript search", "[schema]") {
  const auto anchored = schema_of(R"({"pattern": "^[0-9]+\\.[0-9]+$"})");
  CHECK(validate(json("1.0"), anchored).empty());
  CHECK(only_error(json("1.0.0"), anchored) == "/: '1.0.0' does not match the pattern ^[0-9]+\\.[0-9]+$");
  const auto unanchored = schema_of(R"({"pattern": "GPU-"})");
  CHECK(validate(json("x GPU-1"), unanchored).empty());
  CHECK_FALSE(validate(json("gpu"), unanchored).empty());
  // pattern applies to strings only.
  CHECK(validate(json(5), unanchored).empty());
}

TEST_CASE("minLength and maxLength count characters, not bytes", "[schema]") {
  const auto s = schema_of(R"({"minLength": 2, "maxLength": 3})");
  CHECK(validate(json("ab"), s).empty());
  CHECK(validate(json("\xc3\xa9\xc3\xa9\xc3\xa9"), s).empty());  // three two-byte characters
  CHECK(only_error(json("a"), s) == "/: string 'a' is shorter than 2 character(s)");
  CHECK(only_error(json("abcd"), s) == "/: string 'abcd' is longer than 3 character(s)");
}

TEST_CASE("minimum, maximum and their exclusive forms", "[schema]") {
  const auto s = schema_of(R"({"minimum": 0, "maximum": 1})");
  CHECK(validate(json(0), s).empty());
  CHECK(validate(json(1.0), s).empty());
  CHECK(only_error(json(-0.5), s) == "/: -0.5 is less than the minimum 0");
  CHECK(only_error(json(2), s) == "/: 2 is greater than the maximum 1");
  const auto x = schema_of(R"({"exclusiveMinimum": 0, "exclusiveMaximum": 1})");
  CHECK(validate(json(0.5), x).empty());
  CHECK(only_error(json(0), x) == "/: 0 is not greater than 0");
  CHECK(only_error(json(1), x) == "/: 1 is not less than 1");
}

TEST_CASE("oneOf reports the violations of the only alternative whose type fits", "[schema]") {
  const auto s = schema_of(R"({"oneOf": [{"type": "null"},
                                         {"type": "object", "required": ["code"]}]})");
  CHECK(validate(json(nullptr), s).empty());
  CHECK(validate(json::parse(R"({"code": 700})"), s).empty());
  CHECK(only_error(json::parse(R"({"name": "x"})"), s) == "/: missing required property 'code'");
  const auto e = only_error(json("text"), s);
  CHECK(e.rfind("/: matches none of the 2 alternatives of oneOf", 0) == 0);
}

TEST_CASE("oneOf rejects a value matching more than one alternative", "[schema]") {
  const auto s = schema_of(R"({"oneOf": [{"type": "integer"}, {"minimum": 0}]})");
  CHECK(validate(json(-1), s).empty());
  CHECK(only_error(json(5), s) == "/: matches 2 alternatives of oneOf, expected exactly one");
}

TEST_CASE("anyOf accepts any matching alternative", "[schema]") {
  const auto s = schema_of(R"({"anyOf": [{"type": "string"}, {"type": "integer"}]})");
  CHECK(validate(json("a"), s).empty());
  CHECK(validate(json(1), s).empty());
  CHECK(only_error(json(true), s).rfind("/: matches none of the 2 alternatives of anyOf", 0) == 0);
}

TEST_CASE("allOf and not", "[schema]") {
  const auto all = schema_of(R"({"allOf": [{"type": "integer"}, {"minimum": 3}]})");
  CHECK(validate(json(3), all).empty());
  CHECK(only_error(json(2), all) == "/: 2 is less than the minimum 3");
  const auto neg = schema_of(R"({"not": {"type": "null"}})");
  CHECK(validate(json(1), neg).empty());
  CHECK(only_error(json(nullptr), neg) == "/: must not match the schema under 'not'");
}

TEST_CASE("$ref resolves local JSON pointers, also recursively", "[schema]") {
  const auto s = schema_of(R"({"$ref": "#/$defs/node",
    "$defs": {"node": {"type": "object", "required": ["v"],
                       "properties": {"v": {"type": "integer"},
                                      "next": {"$ref": "#/$defs/node"}}}}})");
  CHECK(validate(json::parse(R"({"v": 1, "next": {"v": 2}})"), s).empty());
  CHECK(only_error(json::parse(R"({"v": 1, "next": {"v": "2"}})"), s) == "/next/v: expected integer, got string");
}

TEST_CASE("boolean schemas", "[schema]") {
  CHECK(validate(json(1), json(true)).empty());
  CHECK(only_error(json(1), json(false)) == "/: no value is allowed here");
}

TEST_CASE("several violations are all reported", "[schema]") {
  const auto s = schema_of(R"({"required": ["a", "b"], "properties": {"c": {"type": "string"}}})");
  CHECK(validate(json::parse(R"({"c": 1})"), s).size() == 3);
}

TEST_CASE("a schema outside the supported subset is refused, not silently accepted", "[schema]") {
  CHECK_THROWS_AS(validate(json(1), schema_of(R"({"multipleOf": 2})")), std::invalid_argument);
  CHECK_THROWS_AS(validate(json(1), schema_of(R"({"$ref": "http://example.com/s.json"})")),
                  std::invalid_argument);
  CHECK_THROWS_AS(validate(json(1), schema_of(R"({"$ref": "#/$defs/missing"})")), std::invalid_argument);
  CHECK_THROWS_AS(validate(json("a"), schema_of(R"({"pattern": "("})")), std::invalid_argument);
  CHECK_THROWS_AS(validate(json(1), schema_of(R"({"type": "float"})")), std::invalid_argument);
}

TEST_CASE("an unsupported keyword is refused when the schema is loaded, wherever it is", "[schema]") {
  // In a branch this document never reaches: still refused, before any validation.
  const auto s = schema_of(R"({"properties": {"never": {"uniqueItems": true}}})");
  CHECK_THROWS_WITH(cudadiag::report::check_schema(s),
                    Catch::Contains("/properties/never/uniqueItems") && Catch::Contains("not supported"));
  CHECK_THROWS_AS(validate(json::object(), s), std::invalid_argument);
  CHECK_THROWS_WITH(cudadiag::report::check_schema(schema_of(R"({"items": [{"type": "integer"}]})")),
                    Catch::Contains("prefixItems"));
  CHECK_THROWS_AS(cudadiag::report::check_schema(schema_of(R"({"anyOf": []})")), std::invalid_argument);
  CHECK_THROWS_AS(cudadiag::report::check_schema(schema_of(R"({"minItems": -1})")), std::invalid_argument);
  CHECK_THROWS_AS(cudadiag::report::check_schema(schema_of(R"({"$defs": {"x": {"$ref": "#/nowhere"}}})")),
                  std::invalid_argument);
  CHECK_NOTHROW(cudadiag::report::check_schema(cudadiag::report::report_schema()));
}

TEST_CASE("enum and const compare objects in any member order and numbers by value", "[schema]") {
  const auto s = schema_of(R"({"const": {"a": 1, "b": [1.0, {"c": 2, "d": 3}]}})");
  CHECK(validate(json::parse(R"({"b": [1, {"d": 3, "c": 2}], "a": 1.0})"), s).empty());
  CHECK(validate(json::parse(R"({"b": [1, {"d": 3, "c": 2}], "a": 2})"), s).size() == 1);
  const auto e = schema_of(R"({"enum": [{"x": 1, "y": 2}, false]})");
  CHECK(validate(json::parse(R"({"y": 2, "x": 1})"), e).empty());
  CHECK(validate(json(0), e).size() == 1);  // false is not 0
}

TEST_CASE("a string too long for the pattern engine is a violation, not a crash", "[schema]") {
  const auto s = schema_of(R"({"pattern": "^[a-z][a-z0-9_]*$"})");
  CHECK(validate(json(std::string(4096, 'a')), s).empty());
  CHECK_THAT(only_error(json(std::string(200000, 'a')), s), Catch::Contains("too long to check against the pattern"));
}

TEST_CASE("$ref fragments are percent-decoded JSON pointers", "[schema]") {
  const auto s = schema_of(R"({"$defs": {"a%b": {"type": "integer"}, "c/d": {"type": "string"}},
                               "properties": {"x": {"$ref": "#/$defs/a%25b"}, "y": {"$ref": "#/$defs/c~1d"}}})");
  CHECK(validate(json::parse(R"({"x": 1, "y": "s"})"), s).empty());
  CHECK(validate(json::parse(R"({"x": "1", "y": 2})"), s).size() == 2);
}

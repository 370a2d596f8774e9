// The report schema validator against the official JSON-Schema-Test-Suite (Debian's
// json-schema-test-suite package; CUDADIAG_JSON_SCHEMA_TEST_SUITE names another copy):
// every test of the keywords the validator claims passes, and every schema using a
// keyword it does not implement is refused when it is loaded. Without the package the
// tests print SKIPPED and the reason.
//
// The package carries drafts 3 to 7; the validator implements a draft 2020-12 subset.
// The draft-7 files are read with the one rename the two drafts need for these
// keywords ("definitions" is "$defs" in 2020-12); the few groups whose meaning changed
// between the drafts are listed with the reason and not run.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "report/schema.h"

namespace fs = std::filesystem;
using cudadiag::report::json;

namespace {

fs::path suite_dir() {
  if (const char* env = std::getenv("CUDADIAG_JSON_SCHEMA_TEST_SUITE")) return env;
  return "/usr/share/json-schema-test-suite/tests/draft7";
}

bool suite_present() {
  if (fs::is_directory(suite_dir())) return true;
  std::printf("SKIPPED: the JSON-Schema-Test-Suite is not installed at %s (apt-get install "
              "json-schema-test-suite, or set CUDADIAG_JSON_SCHEMA_TEST_SUITE)\n",
              suite_dir().string().c_str());
  return false;
}

json read(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// draft 7 -> 2020-12 for the supported keywords: definitions are $defs.
json to_2020_12(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) {
      if (k == "$ref" && v.is_string()) {
        std::string ref = v.get<std::string>();
        if (ref.rfind("#/definitions/", 0) == 0) ref = "#/$defs/" + ref.substr(14);
        out[k] = ref;
      } else {
        out[k == "definitions" ? "$defs" : k] = to_2020_12(v);
      }
    }
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(to_2020_12(v));
    return out;
  }
  return j;
}

bool uses_keyword(const json& schema, const std::string& keyword) {
  if (schema.is_object()) {
    for (const auto& [k, v] : schema.items())
      if (k == keyword || uses_keyword(v, keyword)) return true;
  } else if (schema.is_array()) {
    for (const auto& v : schema)
      if (uses_keyword(v, keyword)) return true;
  }
  return false;
}

// Groups whose expected results are draft 7's and differ in 2020-12 (or rely on $id
// base-URI resolution, which a local-pointer-only $ref does not do). Keyed by
// "file: group description".
const std::set<std::string>& draft_differences() {
  static const std::set<std::string> groups = {
      // draft 7 ignores every keyword beside $ref; 2020-12 applies them.
      "ref.json: ref overrides any sibling keywords",
      "ref.json: $ref prevents a sibling $id from changing the base uri",
  };
  return groups;
}

struct Tally {
  int groups_run = 0, groups_refused = 0, groups_skipped = 0, tests_passed = 0;
  std::vector<std::string> failures, refusals;
};

Tally run_file(const std::string& file) {
  Tally t;
  for (const auto& group : read(suite_dir() / file)) {
    const std::string id = file + ": " + group["description"].get<std::string>();
    if (draft_differences().count(id)) {
      ++t.groups_skipped;
      continue;
    }
    const json schema = to_2020_12(group["schema"]);
    try {
      cudadiag::report::check_schema(schema);
    } catch (const std::invalid_argument& e) {
      ++t.groups_refused;
      t.refusals.push_back(id + ": " + e.what());
      continue;
    }
    ++t.groups_run;
    for (const auto& test : group["tests"]) {
      const bool expected = test["valid"].get<bool>();
      const auto errors = cudadiag::report::validate(test["data"], schema);
      if (errors.empty() == expected) {
        ++t.tests_passed;
      } else {
        t.failures.push_back(id + " / " + test["description"].get<std::string>() + ": expected " +
                             (expected ? "valid" : "invalid") + (errors.empty() ? "" : ", got " + errors.front()));
      }
    }
  }
  return t;
}

}  // namespace

TEST_CASE("JSON-Schema-Test-Suite: every test of a supported keyword passes", "[schema][suite]") {
  if (!suite_present()) return;
  const char* files[] = {"type.json",      "properties.json",       "required.json",   "additionalProperties.json",
                         "items.json",     "enum.json",             "const.json",      "pattern.json",
                         "minimum.json",   "maximum.json",          "exclusiveMinimum.json",
                         "exclusiveMaximum.json", "minItems.json",  "maxItems.json",   "minLength.json",
                         "maxLength.json", "allOf.json",            "anyOf.json",      "oneOf.json",
                         "not.json",       "ref.json",              "boolean_schema.json", "default.json"};
  int total_tests = 0;
  for (const char* file : files) {
    INFO(file);
    REQUIRE(fs::exists(suite_dir() / file));
    const auto t = run_file(file);
    for (const auto& f : t.failures) FAIL_CHECK(f);
    // A refusal must be about a keyword or form outside the subset, never a crash or a
    // misread: the message says which.
    for (const auto& r : t.refusals) {
      std::printf("  refused: %s\n", r.c_str());
      INFO(r);
      CHECK((r.find("not supported") != std::string::npos || r.find("tuple form") != std::string::npos ||
             r.find("only local JSON-pointer $ref") != std::string::npos));
    }
    // The keyword's own file must mostly run, not be refused into a vacuous pass.
    CHECK(t.groups_run > t.groups_refused);
    total_tests += t.tests_passed;
    std::printf("%-28s %2d group(s) run, %2d refused, %d skipped (draft difference), %3d test(s) passed\n", file,
                t.groups_run, t.groups_refused, t.groups_skipped, t.tests_passed);
  }
  CHECK(total_tests > 230);
}

TEST_CASE("JSON-Schema-Test-Suite: a schema using an unsupported keyword is refused when loaded",
          "[schema][suite]") {
  if (!suite_present()) return;
  const std::pair<const char*, const char*> unsupported[] = {
      {"multipleOf.json", "multipleOf"},       {"uniqueItems.json", "uniqueItems"},
      {"patternProperties.json", "patternProperties"}, {"dependencies.json", "dependencies"},
      {"contains.json", "contains"},           {"propertyNames.json", "propertyNames"},
      {"if-then-else.json", "if"},             {"minProperties.json", "minProperties"},
      {"maxProperties.json", "maxProperties"}, {"additionalItems.json", "additionalItems"}};
  int refused = 0;
  for (const auto& [file, keyword] : unsupported) {
    for (const auto& group : read(suite_dir() / file)) {
      const json schema = to_2020_12(group["schema"]);
      if (!uses_keyword(schema, keyword)) continue;
      INFO(file << ": " << group["description"].get<std::string>());
      CHECK_THROWS_AS(cudadiag::report::check_schema(schema), std::invalid_argument);
      // The refusal comes before any document: validate() refuses it too.
      CHECK_THROWS_AS(cudadiag::report::validate(json(nullptr), schema), std::invalid_argument);
      ++refused;
    }
  }
  CHECK(refused >= 25);
}

#include <catch2/catch.hpp>

#include "compare/load.h"
#include "fixtures.h"
#include "util/errors.h"

using namespace cudadiag::compare;
using compare_test::fixture;

namespace {

std::string error_of(const std::string& path) {
  try {
    load_report_file(path);
  } catch (const cudadiag::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("load: a report written by repro loads with its results", "[compare][load]") {
  const auto r = load_report_file(fixture("identical_a.json"));
  CHECK(r.file == fixture("identical_a.json"));
  CHECK(r.report.results.size() == 4);
  CHECK(r.report.host.hostname == "gpu-node-a");
  REQUIRE(r.report.extra.fields_of("suite"));
  CHECK(r.report.extra.fields_of("suite")->string_or("name", "") == "default");
  CHECK(r.notes.empty());
}

TEST_CASE("load: a truncated file names the file and the line and column", "[compare][load]") {
  const auto msg = error_of(fixture("truncated.json"));
  REQUIRE_FALSE(msg.empty());
  CHECK_THAT(msg, Catch::Contains("truncated.json"));
  CHECK_THAT(msg, Catch::Contains("line "));
  CHECK_THAT(msg, Catch::Contains("column "));
  CHECK_THAT(msg, Catch::Contains("truncated"));
}

TEST_CASE("load: the position of a syntax error is the line and column where it broke",
          "[compare][load]") {
  const std::string text = "{\n  \"schema_version\": \"1.0.0\",\n  \"tool\": {,}\n}\n";
  try {
    load_report_text(text, "bad.json");
    FAIL("no error");
  } catch (const cudadiag::InputError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("bad.json: line 3, column 12"));
    CHECK_THAT(e.what(), Catch::Contains("malformed JSON"));
  }
}

TEST_CASE("load: line_column counts from 1", "[compare][load]") {
  std::size_t line = 0, col = 0;
  line_column("ab\ncd\n", 0, line, col);
  CHECK((line == 1 && col == 1));
  line_column("ab\ncd\n", 4, line, col);
  CHECK((line == 2 && col == 2));
  line_column("ab", 99, line, col);
  CHECK((line == 1 && col == 3));
}

TEST_CASE("load: another major schema version is refused", "[compare][load]") {
  const auto msg = error_of(fixture("future_major.json"));
  CHECK_THAT(msg, Catch::Contains("future_major.json"));
  CHECK_THAT(msg, Catch::Contains("/schema_version"));
  CHECK_THAT(msg, Catch::Contains("2.0.0"));
  CHECK_THAT(msg, Catch::Contains("major"));
}

TEST_CASE("load: a newer minor version is read with a note", "[compare][load]") {
  const auto r = load_report_file(fixture("newer_minor.json"));
  REQUIRE(r.notes.size() == 1);
  CHECK_THAT(r.notes[0], Catch::Contains("1.7.0"));
  CHECK(r.report.results.size() == 4);
}

TEST_CASE("load: an older minor version is read without a note", "[compare][load]") {
  // The current schema is 1.0.x; a 1.0.0 report is the oldest of this major.
  const auto r = load_report_text(
      R"({"schema_version":"1.0.0","tool":{},"host":{},"driver":{},"devices":[],"results":[]})", "old.json");
  CHECK(r.notes.empty());
}

TEST_CASE("load: missing sections are named together", "[compare][load]") {
  const auto msg = error_of(fixture("missing_sections.json"));
  CHECK_THAT(msg, Catch::Contains("missing_sections.json"));
  CHECK_THAT(msg, Catch::Contains("devices"));
  CHECK_THAT(msg, Catch::Contains("results"));
}

TEST_CASE("load: documents that are not reports are refused", "[compare][load]") {
  CHECK_THROWS_AS(load_report_text("[1,2]", "x.json"), cudadiag::InputError);
  CHECK_THROWS_AS(load_report_text("", "empty.json"), cudadiag::InputError);
  CHECK_THROWS_WITH(load_report_text(R"({"schema_version":"one","tool":{},"host":{},"driver":{},)"
                                     R"("devices":[],"results":[]})", "v.json"),
                    Catch::Contains("not MAJOR.MINOR.PATCH"));
  CHECK_THROWS_WITH(load_report_text(R"({"schema_version":"1.0.0","tool":{},"host":{},"driver":{},)"
                                     R"("devices":{},"results":[]})", "d.json"),
                    Catch::Contains("/devices") && Catch::Contains("array"));
  CHECK_THROWS_WITH(load_report_text(R"({"schema_version":"1.0.0","tool":{},"host":{},"driver":{},)"
                                     R"("devices":[],"results":[{"kernel":"x","outcome":"ok"}]})", "r.json"),
                    Catch::Contains("r.json") && Catch::Contains("case_id"));
  CHECK_THROWS_AS(load_report_file(fixture("no_such_file.json")), cudadiag::UsageError);
}

TEST_CASE("load: schema versions parse strictly", "[compare][load]") {
  SchemaVersion v;
  CHECK(parse_schema_version("1.2.3", v));
  CHECK((v.major == 1 && v.minor == 2 && v.patch == 3));
  CHECK(parse_schema_version("2.0.0-rc1", v));
  CHECK(v.major == 2);
  CHECK_FALSE(parse_schema_version("1.2", v));
  CHECK_FALSE(parse_schema_version("1.2.3x", v));
  CHECK_FALSE(parse_schema_version("", v));
}

TEST_CASE("load: labels are hostnames, or file names when hostnames clash", "[compare][load]") {
  auto reports = compare_test::load_fixtures({"identical_a.json", "identical_b.json"});
  label_reports(reports);
  CHECK(reports[0].label == "gpu-node-a");
  CHECK(reports[1].label == "gpu-node-b");
  auto same = compare_test::load_fixtures({"identical_a.json", "identical_a.json"});
  label_reports(same);
  CHECK(same[0].label == "identical_a.json");
  CHECK(same[1].label == "identical_a.json#2");
}

TEST_CASE("load: wrong types and hostile documents name the file and the JSON path", "[compare][load]") {
  const std::string head = R"({"schema_version":"1.0.0","tool":{},"host":{},"driver":{},"devices":[],)";
  auto msg = [](const std::string& text) {
    try {
      load_report_text(text, "w.json");
    } catch (const cudadiag::InputError& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  CHECK_THAT(msg(head + R"("results":[],"invocation":42})"), Catch::StartsWith("w.json: /invocation: expected an object"));
  CHECK_THAT(msg(head + R"("results":[],"invocation":{"command":7}})"),
             Catch::StartsWith("w.json: /invocation/command: expected a string"));
  CHECK_THAT(msg(head + R"("results":[],"gpu":{"ran":"yes"}})"), Catch::StartsWith("w.json: /gpu/ran"));
  CHECK_THAT(msg(head + R"("results":[{"case_id":"a","kernel":"k","outcome":"ok","duration_ms":1e999}]})"),
             Catch::StartsWith("w.json: line 1, column ") && Catch::Contains("1e999 is out of range"));
  CHECK_THAT(msg(R"({"a":)" + std::string(100000, '[') + std::string(100000, ']') + R"(,"b":1})"),
             Catch::Contains("w.json") && Catch::Contains("nested deeper"));
  SchemaVersion v;
  CHECK_FALSE(parse_schema_version("99999999999.0.0", v));  // no overflow into a small number
}

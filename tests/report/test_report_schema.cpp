// The report's JSON Schema against what report::to_json writes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "report/schema.h"
#include "sample_report.h"

using namespace cudadiag;
using report::json;

namespace {

json sample_json() { return report::to_json(test::sample_report()); }

bool has_error(const std::vector<std::string>& errors, const std::string& text) {
  return std::find(errors.begin(), errors.end(), text) != errors.end();
}

void check_single_error(const json& doc, const std::string& expected) {
  const auto errors = report::validate_report(doc);
  INFO("errors: " << json(errors).dump(1));
  CHECK(errors.size() == 1);
  CHECK(has_error(errors, expected));
}

}  // namespace

TEST_CASE("the embedded schema is the file in the repository", "[report_schema]") {
  std::ifstream in(std::string(CUDADIAG_SOURCE_DIR) + "/lib/report/report.schema.json");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(report::report_schema_text() == ss.str());
  CHECK(report::report_schema().at("$schema") == "https://json-schema.org/draft/2020-12/schema");
}

TEST_CASE("a report with a result of every outcome validates", "[report_schema]") {
  const auto doc = sample_json();
  REQUIRE(doc.at("results").size() == test::all_outcomes().size());
  const auto errors = report::validate_report(doc);
  INFO("errors: " << json(errors).dump(1));
  CHECK(errors.empty());
}

TEST_CASE("a fresh report with no results validates once it has a verdict", "[report_schema]") {
  auto r = report::new_report({"cudadiag", "env"}, "env");
  r.verdict.status = report::VerdictStatus::ok;
  report::finish_report(r);
  const auto errors = report::validate_report(report::to_json(r));
  INFO("errors: " << json(errors).dump(1));
  CHECK(errors.empty());
}

TEST_CASE("a verdict status outside its command's vocabulary is rejected", "[report_schema]") {
  auto r = report::new_report({"cudadiag", "env"}, "env");
  r.verdict.status = report::VerdictStatus::healthy;  // a repro word
  report::finish_report(r);
  CHECK_FALSE(report::validate_report(report::to_json(r)).empty());
  auto doc = report::to_json(r);
  doc["verdict"]["status"] = "bogus";
  CHECK_FALSE(report::validate_report(doc).empty());
}

TEST_CASE("the schema names each command's verdict vocabulary as the code does", "[report_schema]") {
  const auto& branches = report::report_schema().at("$defs").at("verdict_by_command").at("anyOf");
  size_t commands = 0;
  for (const auto& b : branches) {
    const auto& command = b.at("properties").at("invocation").at("properties").at("command");
    if (!b.at("properties").contains("verdict")) continue;  // the fallback for other commands
    const auto statuses =
        b.at("properties").at("verdict").at("properties").at("status").at("enum").get<std::vector<std::string>>();
    const auto names = command.contains("const") ? std::vector<std::string>{command.at("const").get<std::string>()}
                                                 : command.at("enum").get<std::vector<std::string>>();
    for (const auto& name : names) {
      INFO(name);
      ++commands;
      std::vector<std::string> expected;
      const auto parsed = report::parse_command(name);
      REQUIRE(parsed);
      for (auto s : report::statuses_of(*parsed)) expected.emplace_back(report::to_string(s));
      CHECK(statuses == expected);
    }
  }
  CHECK(commands == 8);
}

TEST_CASE("the schema's outcome enum is the outcome vocabulary", "[report_schema]") {
  const auto& names = report::report_schema().at("$defs").at("outcome").at("enum");
  CHECK(names.get<std::vector<std::string>>() == test::all_outcomes());
  std::vector<std::string> code;
  for (auto o : report::all_outcomes()) code.emplace_back(report::to_string(o));
  CHECK(code == test::all_outcomes());
}

TEST_CASE("to_json -> report_from_json -> to_json is identical", "[report_schema]") {
  auto doc = sample_json();
  doc["comparison"] = json{{"verdict", "same"}, {"hosts", 2}};
  const auto again = report::to_json(report::report_from_json(doc));
  CHECK(again.dump(2) == doc.dump(2));
}

TEST_CASE("broken documents are rejected at the right pointer", "[report_schema]") {
  auto doc = sample_json();

  SECTION("unknown outcome") {
    doc["results"][3]["outcome"] = "bogus";
    const auto errors = report::validate_report(doc);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind("/results/3/outcome: 'bogus' is not one of ['ok', 'mismatch', ", 0) == 0);
  }
  SECTION("missing stable key of a result") {
    doc["results"][0].erase("case_id");
    check_single_error(doc, "/results/0: missing required property 'case_id'");
  }
  SECTION("schema_version that is not semver") {
    doc["schema_version"] = "1.0";
    const auto errors = report::validate_report(doc);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind("/schema_version: '1.0' does not match the pattern", 0) == 0);
  }
  SECTION("environment value that is not a string") {
    doc["environment"]["CUDA_LAUNCH_BLOCKING"] = 1;
    check_single_error(doc, "/environment/CUDA_LAUNCH_BLOCKING: expected string, got integer");
  }
  SECTION("error object without a code") {
    doc["results"][2]["error"].erase("code");
    check_single_error(doc, "/results/2/error: missing required property 'code'");
  }
  SECTION("error that is neither null nor an object") {
    doc["results"][2]["error"] = "illegal address";
    const auto errors = report::validate_report(doc);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind("/results/2/error: matches none of the 2 alternatives", 0) == 0);
  }
  SECTION("unknown child ending") {
    doc["results"][2]["child"]["ending"] = "exploded";
    const auto errors = report::validate_report(doc);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind("/results/2/child/ending: 'exploded' is not one of", 0) == 0);
  }
  SECTION("faulting buffer direction outside the vocabulary") {
    doc["results"][2]["faulting_buffer"]["direction"] = "sideways";
    const auto errors = report::validate_report(doc);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind("/results/2/faulting_buffer/direction: 'sideways' is not one of", 0) == 0);
  }
  SECTION("launch grid with two dimensions") {
    doc["results"][2]["launch_log"][0]["grid"] = json::array({16, 1});
    check_single_error(doc, "/results/2/launch_log/0/grid: has 2 items, fewer than the minimum 3");
  }
  SECTION("failure rate above one") {
    doc["results"][2]["repeats"]["failure_rate"] = 1.5;
    check_single_error(doc, "/results/2/repeats/failure_rate: 1.5 is greater than the maximum 1");
  }
  SECTION("negative runs per second") {
    doc["results"][2]["repeats"]["runs_per_second"] = -1;
    check_single_error(doc, "/results/2/repeats/runs_per_second: -1 is less than the minimum 0");
  }
  SECTION("negative duration") {
    doc["results"][1]["duration_ms"] = -3;
    check_single_error(doc, "/results/1/duration_ms: -3 is less than the minimum 0");
  }
  SECTION("expectation_met that is a string") {
    doc["results"][0]["expectation_met"] = "yes";
    check_single_error(doc, "/results/0/expectation_met: expected boolean or null, got string");
  }
  SECTION("missing top-level section") {
    doc.erase("devices");
    check_single_error(doc, "/: missing required property 'devices'");
  }
  SECTION("not an object at all") {
    check_single_error(json::array(), "/: expected object, got array");
  }
}

TEST_CASE("future fields are allowed where sections may grow", "[report_schema]") {
  auto doc = sample_json();
  doc["sweep"] = json{{"points", 12}};
  doc["results"][0]["new_measurement"] = 1.25;
  doc["results"][2]["error"]["ptx_line"] = 17;
  doc["host"]["numa_nodes"] = 2;
  doc["devices"][0]["mig_mode"] = "disabled";
  doc["gpu"]["visible_devices"] = 1;
  const auto errors = report::validate_report(doc);
  INFO("errors: " << json(errors).dump(1));
  CHECK(errors.empty());
}

TEST_CASE("fixed-shape objects reject unknown fields", "[report_schema]") {
  auto doc = sample_json();
  SECTION("verdict") {
    doc["verdict"]["score"] = 3;
    check_single_error(doc, "/verdict: property 'score' is not allowed");
  }
  SECTION("stream excerpt") {
    doc["results"][2]["child"]["stderr"]["lines"] = 6;
    check_single_error(doc, "/results/2/child/stderr: property 'lines' is not allowed");
  }
}

namespace {

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(CUDADIAG_SOURCE_DIR) + "/tests/report/data/" + name);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("report fixtures: good validates and round-trips, broken and truncated do not", "[report_schema]") {
  const auto good = json::parse(read_data("good_report.json"));
  CHECK(report::validate_report(good).empty());
  CHECK(report::to_json(report::report_from_json(good)) == good);
  const auto broken = report::validate_report(json::parse(read_data("broken_report.json")));
  CHECK(broken.size() == 2);
  CHECK(has_error(broken, "/results/0: missing required property 'case_id'"));
  CHECK_THROWS_AS(json::parse(read_data("truncated_report.json")), json::parse_error);
}

TEST_CASE("parse_semver", "[report_schema]") {
  const auto v = report::parse_semver("1.12.3");
  REQUIRE(v);
  CHECK(v->major == 1);
  CHECK(v->minor == 12);
  CHECK(v->patch == 3);
  CHECK(report::parse_semver("2.0.0-rc.1+abc"));
  CHECK(report::parse_semver(report::kSchemaVersion));
  CHECK_FALSE(report::parse_semver("1.0"));
  CHECK_FALSE(report::parse_semver("1.0.0.0"));
  CHECK_FALSE(report::parse_semver("01.0.0"));
  CHECK_FALSE(report::parse_semver("v1.0.0"));
  CHECK_FALSE(report::parse_semver(""));
}

// Reading a report back: every typed member is checked, and a wrong type or an
// out-of-range number is an InputError naming the source and the JSON pointer.
#include <catch2/catch.hpp>

#include <string>

#include "report/json_reader.h"
#include "report/report.h"
#include "sample_report.h"
#include "util/errors.h"

using namespace cudadiag;
using report::json;

namespace {

json sample() { return report::to_json(test::sample_report()); }

// The message of reading `doc` as report "r.json", "" when it reads.
std::string rejection(const json& doc) {
  try {
    report::report_from_json(doc, "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("report_from_json: the sections other commands read must have their types", "[report_from_json]") {
  auto doc = sample();
  REQUIRE(rejection(doc).empty());

  doc = sample();
  doc["invocation"] = 42;
  CHECK_THAT(rejection(doc), Catch::StartsWith("r.json: /invocation: expected an object, got number"));
  doc = sample();
  doc["invocation"]["command"] = 7;
  CHECK_THAT(rejection(doc), Catch::StartsWith("r.json: /invocation/command: expected a string, got number 7"));
  doc = sample();
  doc["gpu"]["ran"] = "yes";
  CHECK_THAT(rejection(doc), Catch::StartsWith("r.json: /gpu/ran: expected true or false, got string \"yes\""));
  doc = sample();
  doc["invocation"]["argv"] = json::array({"cudadiag", 3});
  CHECK_THAT(rejection(doc), Catch::StartsWith("r.json: /invocation/argv/1: expected a string"));
  doc = sample();
  doc["host"]["hostname"] = json::array();
  CHECK_THAT(rejection(doc), Catch::Contains("/host/hostname"));
  doc = sample();
  doc["devices"][0]["uuid"] = 12;
  CHECK_THAT(rejection(doc), Catch::Contains("/devices/0/uuid"));
  doc = sample();
  doc["verdict"]["reasons"] = "none";
  CHECK_THAT(rejection(doc), Catch::Contains("/verdict/reasons: expected an array"));
  doc = sample();
  doc.erase("results");
  CHECK_THAT(rejection(doc), Catch::Contains("r.json: /results: missing"));
}

TEST_CASE("report_from_json: result members are checked at their pointer", "[report_from_json]") {
  auto doc = sample();
  doc["results"][2]["duration_ms"] = "slow";
  CHECK_THAT(rejection(doc), Catch::StartsWith("r.json: /results/2/duration_ms: expected a number"));
  doc = sample();
  doc["results"][0]["device_index"] = 1e300;
  CHECK_THAT(rejection(doc), Catch::Contains("/results/0/device_index") && Catch::Contains("outside"));
  doc = sample();
  doc["results"][0]["device_index"] = 4294967296ULL;
  CHECK_THAT(rejection(doc), Catch::Contains("/results/0/device_index: 4294967296 is outside"));
  doc = sample();
  doc["results"][1]["expectation_met"] = "no";
  CHECK_THAT(rejection(doc), Catch::Contains("/results/1/expectation_met"));
  doc = sample();
  doc["results"][0]["error"] = json{{"code", "700"}};
  CHECK_THAT(rejection(doc), Catch::Contains("/results/0/error/code: expected an integer"));
  doc = sample();
  doc["results"][0]["params"] = json::array();
  CHECK_THAT(rejection(doc), Catch::Contains("/results/0/params: expected an object"));
  doc = sample();
  doc["results"][0].erase("case_id");
  CHECK_THAT(rejection(doc), Catch::Contains("/results/0/case_id: missing"));
  doc = sample();
  doc["results"][3] = "not a result";
  CHECK_THAT(rejection(doc), Catch::Contains("/results/3: expected an object, got string"));
}

TEST_CASE("report_from_json: nested child and repeats members", "[report_from_json]") {
  auto doc = sample();
  size_t with_child = 0;
  for (size_t i = 0; i < doc["results"].size(); ++i)
    if (doc["results"][i].contains("child")) with_child = i;
  REQUIRE(doc["results"][with_child].contains("child"));
  doc["results"][with_child]["child"]["stderr"]["total_bytes"] = -1;
  CHECK_THAT(rejection(doc), Catch::Contains("/results/" + std::to_string(with_child) + "/child/stderr/total_bytes"));
  doc = sample();
  doc["results"][0]["repeats"] = json{{"runs", 3}, {"histogram", json{{"ok", "many"}}}};
  CHECK_THAT(rejection(doc), Catch::Contains("/results/0/repeats/histogram/ok: expected an integer"));
  // null means absent for the optional objects.
  doc = sample();
  doc["results"][0]["error"] = nullptr;
  doc["results"][0]["repeats"] = nullptr;
  CHECK(rejection(doc).empty());
}

TEST_CASE("JsonReader: pointers escape ~ and /, integers are range-checked without casts", "[report_from_json]") {
  const report::JsonReader rd("x.json");
  CHECK(report::JsonReader::member_pointer("/a", "b/c~d") == "/a/b~1c~0d");
  CHECK(rd.integer(json(3.0), "/n", 0, 10) == 3);
  CHECK_THROWS_WITH(rd.integer(json(3.5), "/n", 0, 10), Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(rd.integer(json(-1), "/n", 0, 10), Catch::Contains("x.json: /n: -1 is outside 0..10"));
  CHECK_THROWS_WITH(rd.integer(json(18446744073709551615ULL), "/n", 0, 10), Catch::Contains("is outside"));
  CHECK_THROWS_WITH(rd.integer(json(1e300), "/n", 0, 10), Catch::Contains("is outside"));
  CHECK_THROWS_AS(rd.required(json::object(), "k", ""), InputError);
  CHECK_THROWS_WITH(rd.find(json(1), "k", "/top"), Catch::Contains("/top: expected an object"));
}

TEST_CASE("report_from_json: the words and addresses of a result are read once, into their types",
          "[report_from_json]") {
  const auto r = report::report_from_json(sample(), "r.json");
  const auto& fault = r.results[2];
  CHECK(fault.kernel == cases::Family::fault);
  CHECK(fault.error->error_class == taxonomy::ErrorClass::memory_fault);
  CHECK(fault.error->source == taxonomy::ErrorSource::runtime);
  CHECK(fault.child->ending == report::ChildEnding::result);
  REQUIRE(fault.buffers.size() == 1);
  REQUIRE(fault.buffers[0].range);
  CHECK(fault.buffers[0].range->begin == 0x7f0000000000ULL);
  CHECK(fault.buffers[0].range->end == 0x7f0000001000ULL);
  CHECK(fault.buffers[0].allocator == profiles::Allocator::fence_back);
  CHECK(fault.launch_log.at(0).grid == std::array<std::uint64_t, 3>{16, 1, 1});
  CHECK(fault.xid.at(0).pid == 4242);
  CHECK(r.results[7].device.is_host());
  CHECK(r.results[0].device == report::Device::gpu("GPU-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b"));
  CHECK(fault.details.int_or("first_bad_index", 0) == 4096);

  auto doc = sample();
  doc["results"][2]["buffers"][0]["range"] = "7f00-7f10";
  CHECK_THAT(rejection(doc), Catch::Contains("/results/2/buffers/0/range: expected \"0x<start>-0x<end>\""));
  doc = sample();
  doc["results"][2]["error"]["class"] = "segfault";
  CHECK_THAT(rejection(doc), Catch::Contains("/results/2/error/class: unknown error class 'segfault'"));
  doc = sample();
  doc["results"][2]["child"]["ending"] = "exploded";
  CHECK_THAT(rejection(doc), Catch::Contains("/results/2/child/ending: unknown ending 'exploded'"));
  doc = sample();
  doc["results"][2]["kernel"] = "warp_drive";
  CHECK_THAT(rejection(doc), Catch::Contains("/results/2/kernel: unknown kernel 'warp_drive'"));
  doc = sample();
  doc["results"][2]["launch_log"][0]["grid"] = json::array({16, 1});
  CHECK_THAT(rejection(doc), Catch::Contains("/results/2/launch_log/0/grid: expected 3 numbers, got 2"));
}

TEST_CASE("report values: typed members keep their order, kinds and numbers", "[report_from_json]") {
  const json j = json::parse(R"({"b": 1, "a": -2, "u": 18446744073709551615, "d": 0.1, "s": "x",
                                 "l": [true, null, {"k": [1, 2]}], "o": {}})");
  const auto f = report::fields_from_json(j);
  CHECK(report::to_json(f).dump() == j.dump());
  CHECK(f.items().front().name == "b");
  CHECK(f.find("u")->kind() == report::Value::Kind::unsigned_integer);
  CHECK(f.find("a")->as_int() == -2);
  CHECK(f.find("d")->kind() == report::Value::Kind::number);
  CHECK(f.fields_of("o") != nullptr);
  auto g = f;
  g.set("b", "now a string");
  CHECK(g.items().front().name == "b");
  CHECK(g.string_or("b", "") == "now a string");
  g.erase("b");
  CHECK_FALSE(g.contains("b"));
}

TEST_CASE("an Xid line's points_to is read once as a word of the table", "[report][xid]") {
  auto doc = sample();
  doc["results"][2]["xid"][0]["points_to"] = "hardware";
  CHECK(report::report_from_json(doc, "r.json").results[2].xid.at(0).points_to == report::XidPointsTo::hardware);
  doc["results"][2]["xid"][0]["points_to"] = "the moon";
  CHECK_THAT(rejection(doc), Catch::Contains("/results/2/xid/0/points_to: unknown word 'the moon'"));
}

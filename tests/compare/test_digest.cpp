#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "compare/digest_reader.h"
#include "fixtures.h"
#include "util/atomic_file.h"
#include "util/errors.h"

using namespace cudadiag::compare;
using cudadiag::report::json;

namespace {

// A minimal report around the given results.
std::string report_text(const json& results, const json& devices = json::array()) {
  json doc{{"schema_version", "1.0.0"}, {"tool", json::object()}, {"host", {{"hostname", "h"}}},
           {"driver", json::object()},  {"devices", devices},       {"results", results}};
  return doc.dump(2);
}

json result(const std::string& outcome) {
  return json{{"case_id", "fault.oob-write"}, {"kernel", "fault"}, {"params", {{"n", 4096}}},
              {"profile", "fence"},           {"device", "GPU-a"}, {"device_index", 0},
              {"outcome", outcome},           {"expected", ""},    {"error", nullptr},
              {"duration_ms", 1.5}};
}

json repeats(int runs, int failures, json histogram = nullptr) {
  json r{{"runs", runs}, {"failures", failures}};
  if (!histogram.is_null()) r["histogram"] = histogram;
  return r;
}

std::string refusal(const std::string& text, const std::string& file = "r.json") {
  DigestTables tables;
  try {
    read_digest(text, file, tables);
  } catch (const cudadiag::InputError& e) {
    return e.what();
  }
  return "";
}

std::string refusal_of(const json& one_result) { return refusal(report_text(json::array({one_result}))); }

// The first result of a document that carries repeat statistics.
json& result_with_repeats(json& doc) {
  for (auto& r : doc["results"])
    if (r.contains("repeats") && r["repeats"].is_object()) return r;
  throw std::runtime_error("no result with repeats");
}

}  // namespace

TEST_CASE("digest: a real repro report keeps what compare reads", "[compare][digest]") {
  DigestTables tables;
  const auto d = read_digest_file(compare_test::fixture("device_h100.json"), tables);
  CHECK(d.results.size() == 49);
  CHECK(*d.command == "repro");
  CHECK(d.command_kind == cudadiag::report::Command::repro);
  CHECK(*d.verdict == "healthy");
  CHECK(*d.gpu_model == "NVIDIA H100 80GB HBM3");
  CHECK(d.devices_used == std::vector<std::size_t>{0});
  std::size_t host = 0, gpu0 = 0, repeated = 0;
  for (const auto& r : d.results) {
    host += *r.device == "host";
    gpu0 += *r.device == "gpu0";
    repeated += r.repeat_runs.has_value();
  }
  CHECK(host == 3);
  CHECK(gpu0 == 46);
  CHECK(repeated == 40);
  const auto hang = std::find_if(d.results.begin(), d.results.end(),
                                 [](const ResultDigest& r) { return *r.case_id == "fault.hang"; });
  REQUIRE(hang != d.results.end());
  CHECK(hang->outcome_class == OutcomeClass::failure);
  CHECK(hang->expectation_met == true);
  // Identical reports share every string.
  const auto strings = tables.strings.size();
  read_digest_file(compare_test::fixture("device_h100.json"), tables);
  CHECK(tables.strings.size() == strings);
}

TEST_CASE("digest: syntax errors name the line and column like the whole-document loader", "[compare][digest]") {
  const std::string text = "{\n  \"schema_version\": \"1.0.0\",\n  \"tool\": {,}\n}\n";
  CHECK_THAT(refusal(text, "bad.json"), Catch::StartsWith("bad.json: line 3, column 12"));
  CHECK_THAT(refusal(text, "bad.json"), Catch::Contains("malformed JSON"));
  const auto truncated = cudadiag::read_file_or_stdin(compare_test::fixture("truncated.json"));
  CHECK_THAT(refusal(truncated, "t.json"), Catch::Contains("the file looks truncated"));
  CHECK_THAT(refusal("[1, 2]"), Catch::Contains("not a cudadiag report (top level is array"));
}

TEST_CASE("digest: sections and versions are checked as the loader checks them", "[compare][digest]") {
  CHECK_THAT(refusal(R"({"schema_version":"1.0.0","tool":{},"host":{},"driver":{}})"),
             Catch::Contains("missing required section(s): devices, results"));
  CHECK_THAT(refusal(R"({"schema_version":"2.0.0","tool":{},"host":{},"driver":{},"devices":[],)"
                     R"("results":[{"shape":"from the future"}]})"),
             Catch::Contains("/schema_version") && Catch::Contains("major"));
  CHECK_THAT(refusal(R"({"schema_version":"1.0.0","tool":{},"host":{},"driver":{},"devices":[],"results":{}})"),
             Catch::Contains("/results: must be an array, found object"));
  DigestTables tables;
  const auto d = read_digest(R"({"schema_version":"1.9.0","tool":{},"host":{},"driver":{},"devices":[],)"
                             R"("results":[],"later":{"x":[1,2]}})",
                             "new.json", tables);
  REQUIRE(d.notes.size() == 1);
  CHECK_THAT(d.notes[0], Catch::Contains("1.9.0"));
}

TEST_CASE("digest: fields of the wrong type are refused with their JSON path", "[compare][digest]") {
  auto r = result("ok");
  r["duration_ms"] = "fast";
  CHECK_THAT(refusal_of(r), Catch::Contains("r.json: /results/0/duration_ms: must be a number, found string"));
  r = result("ok");
  r["duration_ms"] = -1;
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/duration_ms"));
  r = result("ok");
  r["repeats"] = repeats(1, 0);
  r["repeats"]["runs"] = 99999999999LL;
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/repeats/runs: 99999999999 is out of range"));
  r = result("ok");
  r["repeats"] = repeats(1, 0);
  r["repeats"]["runs"] = 1.5;
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/repeats/runs: must be an integer"));
  r = result("ok");
  r["error"] = {{"code", "700"}};
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/error/code: must be an integer, found string"));
  r = result("ok");
  r.erase("case_id");
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0: missing case_id"));
  r = result("ok");
  r["params"] = json::array();
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/params: must be an object, found array"));
  CHECK_THAT(refusal(report_text(json::array({result("ok"), 7}))), Catch::Contains("/results/1: must be an object"));
  r = result("ok");
  r["expectation_met"] = "yes";
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/expectation_met: must be a boolean"));
  // Member names in a path are escaped as JSON pointers.
  r = result("ok");
  r["repeats"] = repeats(1, 0, {{"a/b~c", "x"}});
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/repeats/histogram/a~1b~0c: must be an integer, found string"));
}

TEST_CASE("digest: an outcome outside the vocabulary is refused", "[compare][digest]") {
  CHECK_THAT(refusal_of(result("exploded")),
             Catch::Contains("/results/0/outcome: unknown outcome 'exploded'") && Catch::Contains("cuda_error"));
}

TEST_CASE("digest: a result whose repeats contradict its outcome is refused", "[compare][digest]") {
  // The defect: cuda_error with no failed run paired as "same" against ok.
  auto r = result("cuda_error");
  r["error"] = {{"code", 700}, {"name", "cudaErrorIllegalAddress"}};
  r["repeats"] = repeats(20, 0, {{"ok", 20}});
  const auto msg = refusal_of(r);
  CHECK_THAT(msg, Catch::StartsWith("r.json: /results/0/repeats/failures: 0 of 20 runs failed, but the outcome is "
                                    "cuda_error"));
  r = result("ok");
  r["repeats"] = repeats(50, 3);
  CHECK_THAT(refusal_of(r), Catch::Contains("3 of 50 runs failed, but the outcome is ok"));
  r = result("mismatch");
  r["repeats"] = repeats(5, 7);
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/repeats/failures: 7 failures of 5 runs"));
  r = result("mismatch");
  r["repeats"] = repeats(50, 3, {{"ok", 40}, {"mismatch", 3}});
  CHECK_THAT(refusal_of(r), Catch::Contains("/results/0/repeats/histogram: counts add up to 43"));
  r = result("mismatch");
  r["repeats"] = repeats(50, 3, {{"ok", 46}, {"mismatch", 4}});
  CHECK_THAT(refusal_of(r), Catch::Contains("4 run(s) are not ok, but repeats.failures is 3"));
  // Consistent statistics read as they are.
  r = result("mismatch");
  r["repeats"] = repeats(50, 3, {{"ok", 47}, {"mismatch", 3}});
  DigestTables tables;
  const auto d = read_digest(report_text(json::array({r})), "r.json", tables);
  CHECK(d.results.at(0).repeat_runs == 50);
  CHECK(d.results.at(0).repeat_failures == 3);
  // A skipped case carries no statistics worth checking against it.
  r = result("skipped");
  r["repeats"] = repeats(0, 0);
  CHECK(refusal_of(r).empty());
}

TEST_CASE("digest: the same CLI refusal for the inconsistent fixture", "[compare][digest]") {
  CHECK_THAT(refusal(cudadiag::read_file_or_stdin(compare_test::fixture("inconsistent_repeats.json")),
                     "inconsistent_repeats.json"),
             Catch::Contains("/results/2/repeats/failures: 0 of 20 runs failed, but the outcome is cuda_error"));
}

TEST_CASE("digest: device positions count the GPUs a report ran on", "[compare][digest]") {
  const json devices = json::array({{{"index", 0}, {"uuid", "GPU-a"}, {"name", "NVIDIA H100 80GB HBM3"}},
                                    {{"index", 1}, {"uuid", "GPU-b"}, {"name", "NVIDIA H200"}}});
  auto on_b = result("ok");
  on_b.erase("device_index");
  on_b["device"] = "GPU-b";
  auto on_host = result("host_valid");
  on_host["device"] = "host";
  on_host.erase("device_index");
  DigestTables tables;
  // `repro --devices 1`: its only GPU is position gpu0, and gpu0's facts are device 1's.
  const auto d = read_digest(report_text(json::array({on_b, on_host}), devices), "b.json", tables);
  CHECK(d.devices_used == std::vector<std::size_t>{1});
  CHECK(*d.results[0].device == "gpu0");
  CHECK(*d.results[1].device == "host");
  CHECK(*d.gpu_model == "NVIDIA H200");
  // Without GPU results, every device is described.
  const auto env_only = read_digest(report_text(json::array(), devices), "e.json", tables);
  CHECK(env_only.devices_used == std::vector<std::size_t>{0, 1});
  auto unknown = result("ok");
  unknown.erase("device_index");
  unknown["device"] = "GPU-zzz";
  CHECK(*read_digest(report_text(json::array({unknown}), devices), "u.json", tables).results[0].device == "gpu?");
}

TEST_CASE("digest: every section field compare reads is type-checked, nothing coerced", "[compare][digest]") {
  const auto base = json::parse(cudadiag::read_file_or_stdin(compare_test::fixture("device_h100.json")));
  auto refused = [&](const std::function<void(json&)>& change) {
    auto doc = base;
    change(doc);
    return refusal(doc.dump(), "bad.json");
  };
  CHECK(refused([](json&) {}).empty());
  CHECK_THAT(refused([](json& d) { d["gpu"]["ran"] = "yes"; }),
             Catch::Contains("bad.json: /gpu/ran: must be a boolean, found a string"));
  CHECK_THAT(refused([](json& d) { d["invocation"] = json::array({"repro"}); }),
             Catch::Contains("bad.json: /invocation: must be an object, found an array"));
  CHECK_THAT(refused([](json& d) { d["invocation"]["command"] = 1; }),
             Catch::Contains("bad.json: /invocation/command: must be a string, found a number"));
  CHECK_THAT(refused([](json& d) { d["gpu"] = "ran"; }), Catch::Contains("bad.json: /gpu: must be an object"));
  CHECK_THAT(refused([](json& d) { d["gpu"]["reason"] = false; }), Catch::Contains("/gpu/reason: must be a string"));
  CHECK_THAT(refused([](json& d) { d["verdict"]["status"] = 0; }), Catch::Contains("/verdict/status: must be a string"));
  CHECK_THAT(refused([](json& d) { d["suite"]["name"] = json::object(); }), Catch::Contains("/suite/name: must be a string"));
  CHECK_THAT(refused([](json& d) { d["tool"]["version"] = 1.0; }), Catch::Contains("/tool/version: must be a string"));
  CHECK_THAT(refused([](json& d) { d["host"]["hostname"] = 7; }), Catch::Contains("/host/hostname: must be a string"));
  CHECK_THAT(refused([](json& d) { d["environment"]["CUDA_HOME"] = 3; }),
             Catch::Contains("/environment/CUDA_HOME: must be a string, found a number"));
  CHECK_THAT(refused([](json& d) { d["driver"]["version"] = json::array({580}); }),
             Catch::Contains("/driver/version: must be a string, found an array"));
  CHECK_THAT(refused([](json& d) { d["devices"][0]["nvml"]["vbios"] = 96; }),
             Catch::Contains("/devices/0/nvml/vbios: must be a string, found a number"));
  CHECK_THAT(refused([](json& d) { d["devices"][0]["name"] = true; }), Catch::Contains("/devices/0/name: must be a string"));
  CHECK_THAT(refused([](json& d) { d["devices"][0]["nvml"]["ecc_errors"]["volatile"]["corrected"] = "0"; }),
             Catch::Contains("/devices/0/nvml/ecc_errors: must be a count, or an object of counts"));
  CHECK_THAT(refused([](json& d) { d["devices"][0]["uuid"] = 1; }), Catch::Contains("/devices/0/uuid: must be a string"));
  CHECK_THAT(refused([](json& d) { d["devices"][0] = "H100"; }), Catch::Contains("/devices/0: must be an object"));
  CHECK_THAT(refused([](json& d) { d["host"]["kernel"] = json{{"release", 6}}; }),
             Catch::Contains("/host/kernel/release: must be a string"));
  CHECK_THAT(refused([](json& d) { d["results"][0]["expected"] = 1; }),
             Catch::Contains("/results/0/expected: must be a string, found number"));
  CHECK_THAT(refused([](json& d) { result_with_repeats(d)["repeats"]["seconds"] = "0.1"; }),
             Catch::Contains("/repeats/seconds: must be a number, found string"));
  // Null is "not recorded"; other types that fit are read as they are.
  CHECK(refused([](json& d) { d["host"]["hostname"] = nullptr; }).empty());
  CHECK(refused([](json& d) { d["host"]["kernel"] = "6.8.0"; }).empty());
  CHECK(refused([](json& d) { d["driver"]["nvml_cuda_driver_version_string"] = 13000; }).empty());
  DigestTables tables;
  auto doc = base;
  doc["gpu"]["ran"] = false;
  CHECK_FALSE(read_digest(doc.dump(), "ok.json", tables).gpu_ran);
}

TEST_CASE("digest: the hosts table's driver and model come from the fields of those roles", "[compare][digest]") {
  std::size_t drivers = 0, models = 0;
  for (const auto& f : env_fields()) {
    drivers += f.role == FieldRole::driver_version;
    models += f.role == FieldRole::gpu_model;
    if (f.role == FieldRole::gpu_model) CHECK(f.per_device);
    if (f.role == FieldRole::driver_version) CHECK_FALSE(f.per_device);
  }
  CHECK(drivers == 1);
  CHECK(models == 1);
  DigestTables tables;
  const auto d = read_digest_file(compare_test::fixture("device_h100.json"), tables);
  REQUIRE(d.driver);
  CHECK_FALSE(d.driver->empty());
}

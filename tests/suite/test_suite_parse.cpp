#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include "cases/catalog.h"
#include "suite/suite.h"
#include "util/errors.h"

using namespace cudadiag;
using suite::parse_suite;

namespace {

std::vector<std::string> names_of(const std::vector<cudadiag::profiles::Profile>& ps) {
  std::vector<std::string> out;
  for (const auto& p : ps) out.push_back(p.name);
  return out;
}


// The message of the InputError a malformed suite raises ("" when it parses).
std::string rejection(const std::string& text) {
  try {
    parse_suite(text, "bad.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(CUDADIAG_TEST_DATA) + "/suites/" + name);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("suite: catalog cases with overrides and kernel cases", "[suite]") {
  const auto s = parse_suite(R"({
    "suite": "t", "description": "d", "version": 1,
    "defaults": {"profiles": ["default", "blocking+fence"], "repeat": 2, "deadline_ms": 5000},
    "cases": [
      {"id": "fault.oob-write"},
      {"id": "fault.oob-write", "name": "oob-far", "params": {"k": 64},
       "profiles": ["fence"], "expected": {"fence": "error:700"}, "repeat": 3},
      {"kernel": "fault", "params": {"reproducer": "ok-control"}, "expected": {"*": "ok"}}
    ]})",
                             "t.json");
  CHECK(s.name == "t");
  CHECK(s.description == "d");
  REQUIRE(s.cases.size() == 3);
  const auto& a = s.cases[0];
  CHECK(a.def.id == "fault.oob-write");
  CHECK(names_of(a.profiles) == std::vector<std::string>{"default", "blocking+fence"});
  CHECK(a.repeat == 2);
  CHECK(a.def.deadline_ms == 5000);
  CHECK(a.def.expected == cases::find_case("fault.oob-write")->expected);

  const auto& b = s.cases[1];
  CHECK(b.def.id == "oob-far");
  CHECK(b.def.params["k"] == 64);
  CHECK(b.def.params["reproducer"] == "oob-write");  // catalog parameters kept
  CHECK(b.def.expected.by_profile.at("fence") == "error:700");
  CHECK(b.def.expected.by_profile.at("default") == cases::find_case("fault.oob-write")->expected.by_profile.at("default"));
  CHECK(names_of(b.profiles) == std::vector<std::string>{"fence"});
  CHECK(b.repeat == 3);

  const auto& c = s.cases[2];
  CHECK_FALSE(c.from_catalog);
  CHECK(c.def.family == cases::Family::fault);
  CHECK(c.def.params["elements"] == 4096);  // normalised: defaults filled
  CHECK(c.def.id == "fault.suite-2");
}

TEST_CASE("suite: name defaults to the file stem; profile names are canonicalised", "[suite]") {
  const auto s = parse_suite(R"({"cases": [{"id": "fault.ok-control", "profiles": ["default+fence"],
                                 "expected": {"default + fence": "ok"}}]})",
                             "/x/y/my-scenario.json");
  CHECK(s.name == "my-scenario");
  CHECK(names_of(s.cases[0].profiles) == std::vector<std::string>{"fence"});
  CHECK(s.cases[0].def.expected.by_profile.at("fence") == "ok");
}

TEST_CASE("suite: every malformed kind is rejected with the file and JSON path", "[suite]") {
  // bad JSON: line and column
  CHECK_THAT(rejection("{\n  \"cases\": [\n    {\"id\": }\n  ]\n}"),
             Catch::Contains("bad.json") && Catch::Contains("line 3") && Catch::Contains("malformed JSON"));
  CHECK_THAT(rejection("{\"cases\": ["), Catch::Contains("malformed JSON"));
  CHECK_THAT(rejection("[]"), Catch::Contains("bad.json: /: expected an object"));
  CHECK_THAT(rejection("{}"), Catch::Contains("/cases: missing"));
  CHECK_THAT(rejection(R"({"cases": []})"), Catch::Contains("/cases: no cases"));
  CHECK_THAT(rejection(R"({"cases": {}})"), Catch::Contains("/cases: expected an array"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control"}], "run": "rm -rf /"})"),
             Catch::Contains("/run: unknown key"));
  CHECK_THAT(rejection(R"({"version": 2, "cases": [{"id": "fault.ok-control"}]})"),
             Catch::Contains("/version: 2 is outside 1..1"));
  // cases
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control"}, {"id": "fault.nope"}]})"),
             Catch::Contains("bad.json: /cases/1/id: unknown case id 'fault.nope'"));
  CHECK_THAT(rejection(R"({"cases": [{"kernel": "warp-drive"}]})"),
             Catch::Contains("/cases/0/kernel: unknown kernel 'warp-drive'"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "kernel": "fault"}]})"),
             Catch::Contains("/cases/0: a case names exactly one"));
  CHECK_THAT(rejection(R"({"cases": [{"name": "x"}]})"), Catch::Contains("/cases/0: a case names exactly one"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "command": "nvidia-smi -r"}]})"),
             Catch::Contains("/cases/0/command: unknown key 'command'"));
  CHECK_THAT(rejection(R"({"cases": [42]})"), Catch::Contains("/cases/0: expected an object"));
  // impossible parameters, mapped to the parameter's own path
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.oob-write", "params": {"k": 5000}}]})"),
             Catch::Contains("/cases/0/params/k: k: 5000 is outside"));
  CHECK_THAT(rejection(R"({"cases": [{"kernel": "fault", "params": {"reproducer": "zap"}}]})"),
             Catch::Contains("/cases/0/params/reproducer: reproducer: unknown 'zap'"));
  CHECK_THAT(rejection(R"({"cases": [{"kernel": "fault", "params": []}]})"),
             Catch::Contains("/cases/0/params: expected an object"));
  // profiles
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "profiles": ["default", "turbo"]}]})"),
             Catch::Contains("/cases/0/profiles/1: unknown profile 'turbo'"));
  CHECK_THAT(rejection(R"({"defaults": {"profiles": ["nocache+fence"]}, "cases": [{"id": "fault.ok-control"}]})"),
             Catch::Contains("/defaults/profiles/0:") && Catch::Contains("allocator"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "profiles": []}]})"),
             Catch::Contains("/cases/0/profiles: empty profile list"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "profiles": ["fence", "default+fence"]}]})"),
             Catch::Contains("/cases/0/profiles/1: profile 'fence' listed twice"));
  // expectations
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "expected": {"fence": "exploded"}}]})"),
             Catch::Contains("/cases/0/expected/fence: unknown expectation 'exploded'"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "expected": {"warp": "ok"}}]})"),
             Catch::Contains("/cases/0/expected/warp: unknown profile"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "expected": {"*": 1}}]})"),
             Catch::Contains("/cases/0/expected/*: expected an expectation string"));
  // numbers and duplicates
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "repeat": 0}]})"),
             Catch::Contains("/cases/0/repeat: 0 is outside 1..100000"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "repeat": "3"}]})"),
             Catch::Contains("/cases/0/repeat: expected an integer"));
  CHECK_THAT(rejection(R"({"defaults": {"deadline_ms": -5}, "cases": [{"id": "fault.ok-control"}]})"),
             Catch::Contains("/defaults/deadline_ms"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control"}, {"id": "fault.ok-control"}]})"),
             Catch::Contains("/cases/1: duplicate case id 'fault.ok-control'"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.oob-write", "fence_allocator": "fence-side"}]})"),
             Catch::Contains("/cases/0/fence_allocator"));
}

TEST_CASE("suite: malformed suite files from test data", "[suite]") {
  CHECK_THAT(rejection(read_data("bad_syntax.json")), Catch::Contains("line 4"));
  CHECK_THAT(rejection(read_data("bad_unknown_case.json")), Catch::Contains("/cases/2/id"));
  CHECK_THAT(rejection(read_data("bad_param.json")), Catch::Contains("/cases/1/params/elements"));
  CHECK_NOTHROW(parse_suite(read_data("good_small.json"), "good_small.json"));
}

TEST_CASE("suite: every embedded suite parses against the catalog", "[suite]") {
  const auto names = suite::embedded_suite_names();
  REQUIRE(std::find(names.begin(), names.end(), "default") != names.end());
  for (const auto& n : {"ring-attention-head-slice", "fa-tile-misaligned", "flashinfer-tma-seqlen1",
                        "caching-hides-overrun"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  for (const auto& n : names) {
    INFO("suite " << n);
    const auto s = suite::load_suite(n);
    CHECK(s.name == n);
    CHECK_FALSE(s.description.empty());
    CHECK_FALSE(s.cases.empty());
  }
}

TEST_CASE("suite: the default suite covers every family", "[suite]") {
  const auto s = suite::load_suite("default");
  std::set<cases::Family> kernels;
  size_t runs = 0;
  for (const auto& c : s.cases) {
    kernels.insert(c.def.family);
    runs += c.profiles.size() * static_cast<size_t>(c.repeat);
  }
  for (const auto& f : cases::families()) {
    if (f.cases().empty()) continue;  // a family without catalog cases yet
    CHECK(kernels.count(f.id) == 1);
  }
  CHECK(runs >= 30);
}

TEST_CASE("suite: load_suite and filter_cases", "[suite]") {
  CHECK_THROWS_WITH(suite::load_suite("no-such-suite"), Catch::Contains("default"));
  CHECK_THROWS_AS(suite::load_suite("/no/such/file.json"), UsageError);
  const auto path = std::string(CUDADIAG_TEST_DATA) + "/suites/good_small.json";
  auto s = suite::load_suite(path);
  CHECK(s.file == path);
  suite::filter_cases(s, "fault.oob-*");
  REQUIRE_FALSE(s.cases.empty());
  for (const auto& c : s.cases) CHECK(c.def.id.rfind("fault.oob-", 0) == 0);
  CHECK_THROWS_WITH(suite::filter_cases(s, "nomatch*"), Catch::Contains("matches no case"));
  const auto j = suite::suite_json(s);
  CHECK(j["name"] == "good_small");
  CHECK(j["cases"].size() == s.cases.size());
}

TEST_CASE("suite: parameters are checked with the command line's rules before anything runs", "[suite]") {
  auto reject = [](const std::string& text) {
    try {
      suite::parse_suite(text, "wrap.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(reject(R"({"cases": [{"kernel": "attention", "params": {"seq_len": 2147483648}, "expected": {"*": "ok"}}]})"),
             Catch::Contains("wrap.json") && Catch::Contains("/cases/0/params/seq_len") && Catch::Contains("is outside"));
  CHECK_THAT(reject(R"({"cases": [{"kernel": "attention", "params": {"block_m": -64}, "expected": {"*": "ok"}}]})"),
             Catch::Contains("/cases/0/params/block_m") && Catch::Contains("must be at least 1"));
  CHECK_THAT(reject(R"({"cases": [{"id": "fa.seed.bm64-bn64-w4.s64", "params": {"warps": 0}}]})"),
             Catch::Contains("/cases/0/params/warps"));
}

TEST_CASE("suite: hostile documents are refused naming the file", "[suite]") {
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "repeat": 1e999}]})"),
             Catch::Contains("bad.json: line 1") && Catch::Contains("1e999 is out of range"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "repeat": 1e300}]})"),
             Catch::Contains("/cases/0/repeat") && Catch::Contains("outside 1..100000"));
  CHECK_THAT(rejection(R"({"cases": [{"id": "fault.ok-control", "repeat": 18446744073709551615}]})"),
             Catch::Contains("/cases/0/repeat") && Catch::Contains("outside"));
  CHECK_THAT(rejection("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + ",\"b\":1}"),
             Catch::Contains("bad.json") && Catch::Contains("nested deeper"));
}

#include <catch2/catch.hpp>

#include "compare/pairing.h"
#include "fixtures.h"

using namespace cudadiag::compare;
using cudadiag::report::json;

TEST_CASE("pairing: parameters pair regardless of key order", "[compare][pairing]") {
  const auto a = json::parse(R"({"b":1,"a":{"y":2,"x":3}})");
  const auto b = json::parse(R"({"a":{"x":3,"y":2},"b":1})");
  CHECK(canonical_params(a) == canonical_params(b));
  CHECK(canonical_params(a) != canonical_params(json::parse(R"({"a":{"x":3,"y":2},"b":2})")));
}

TEST_CASE("pairing: device position from index, else from the UUID's place", "[compare][pairing]") {
  const auto devices = json::parse(R"([{"uuid":"GPU-a"},{"uuid":"GPU-b"}])");
  cudadiag::report::Result r;
  r.device = "GPU-b";
  CHECK(device_position(r, devices) == "gpu1");
  r.device_index = 0;
  CHECK(device_position(r, devices) == "gpu0");
  r.device_index = -1;
  r.device = "host";
  CHECK(device_position(r, devices) == "host");
  r.device = "GPU-unknown";
  CHECK(device_position(r, devices) == "gpu?");
}

TEST_CASE("pairing: identical suites pair every result", "[compare][pairing]") {
  const auto reports = compare_test::load_fixtures({"identical_a.json", "identical_b.json"});
  const auto p = pair_results(reports);
  CHECK(p.cases.size() == 4);
  CHECK(p.unpaired.empty());
  for (const auto& c : p.cases) CHECK(c.present() == 2);
}

TEST_CASE("pairing: unpaired results are listed per report, and changed parameters are named",
          "[compare][pairing]") {
  auto reports = compare_test::load_fixtures({"identical_a.json", "identical_b.json"});
  reports[0].report.results.pop_back();             // fault case only in b
  reports[1].report.results[1].params["rows"] = 8;  // index_select with other params
  const auto p = pair_results(reports);
  REQUIRE(p.unpaired.size() == 3);
  // Sorted by report: a's index_select first, then b's fault and index_select.
  CHECK(p.unpaired[0].report == 0);
  CHECK(p.unpaired[0].key.case_id == "index_select.head_slice");
  CHECK_THAT(p.unpaired[0].hint, Catch::Contains("other parameters"));
  bool fault_seen = false;
  for (const auto& u : p.unpaired) {
    if (u.key.case_id != "fault.oob_write_1elem") continue;
    fault_seen = true;
    CHECK(u.report == 1);
    CHECK(u.missing_in == std::vector<std::size_t>{0});
    CHECK(u.hint == "not run there");
  }
  CHECK(fault_seen);
}

TEST_CASE("pairing: a repeated entry pairs with the repeated entry", "[compare][pairing]") {
  auto reports = compare_test::load_fixtures({"identical_a.json", "identical_b.json"});
  reports[0].report.results.push_back(reports[0].report.results[0]);
  const auto p = pair_results(reports);
  CHECK(p.cases.size() == 5);
  REQUIRE(p.unpaired.size() == 1);
  CHECK(p.unpaired[0].key.occurrence == 2);
}

#include <catch2/catch.hpp>

#include "compare/compare.h"
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
  r.device = cudadiag::report::Device::gpu("GPU-b");
  CHECK(device_position(r, devices) == "gpu1");
  r.device_index = 0;
  CHECK(device_position(r, devices) == "gpu0");
  r.device_index = -1;
  r.device = cudadiag::report::Device::host_only();
  CHECK(device_position(r, devices) == "host");
  r.device = cudadiag::report::Device::gpu("GPU-unknown");
  CHECK(device_position(r, devices) == "gpu?");
}

TEST_CASE("pairing: identical suites pair every result", "[compare][pairing]") {
  const auto set = digest_reports(compare_test::load_fixtures({"identical_a.json", "identical_b.json"}));
  const auto p = pair_results(set.reports);
  CHECK(p.cases.size() == 4);
  CHECK(p.unpaired.empty());
  for (const auto& c : p.cases) CHECK(c.present() == 2);
}

TEST_CASE("pairing: unpaired results are listed per report, and changed parameters are named",
          "[compare][pairing]") {
  auto reports = compare_test::load_fixtures({"identical_a.json", "identical_b.json"});
  reports[0].report.results.pop_back();             // fault case only in b
  reports[1].report.results[1].params.set("rows", 8);  // index_select with other params
  const auto set = digest_reports(reports);
  const auto p = pair_results(set.reports);
  // One entry per key, sorted by key: b's fault, then the index_select of each report.
  REQUIRE(p.unpaired.size() == 3);
  CHECK(p.unpaired_results() == 3);
  CHECK(p.unpaired[0].key.case_id == "fault.oob_write_1elem");
  CHECK(p.unpaired[0].present_in == std::vector<std::size_t>{1});
  CHECK(p.unpaired[0].missing_in == std::vector<std::size_t>{0});
  CHECK(p.unpaired[0].hint == "not run there");
  for (std::size_t k = 1; k < 3; ++k) {
    CHECK(p.unpaired[k].key.case_id == "index_select.head_slice");
    CHECK_THAT(p.unpaired[k].hint, Catch::Contains("other parameters"));
  }
  const bool a_first = p.unpaired[1].present_in == std::vector<std::size_t>{0};
  CHECK(p.unpaired[a_first ? 2 : 1].present_in == std::vector<std::size_t>{1});
}

TEST_CASE("pairing: a repeated entry pairs with the repeated entry", "[compare][pairing]") {
  auto reports = compare_test::load_fixtures({"identical_a.json", "identical_b.json"});
  reports[0].report.results.push_back(reports[0].report.results[0]);
  const auto set = digest_reports(reports);
  const auto p = pair_results(set.reports);
  CHECK(p.cases.size() == 5);
  REQUIRE(p.unpaired.size() == 1);
  CHECK(p.unpaired[0].key.occurrence == 2);
}

TEST_CASE("pairing: a host-only result's label names no device, a GPU's does", "[compare][pairing]") {
  PairKey host{"tma_validate", "{}", "default", "host", 1, true};
  CHECK(host.label() == "tma_validate [default]");
  PairKey gpu{"fault", "{}", "default", "gpu0", 2, false};
  CHECK(gpu.label() == "fault [default] @gpu0 #2");
  // The flag decides, not the word: a GPU position is named whatever it reads.
  PairKey odd{"fault", "{}", "default", "host", 1, false};
  CHECK(odd.label() == "fault [default] @host");
  const auto set = digest_reports(compare_test::load_fixtures({"identical_a.json", "identical_b.json"}));
  for (const auto& c : pair_results(set.reports).cases) CHECK(c.key.host_only == (c.key.device == "host"));
}

// Fleets: many reports grouped, tested against the rest, rendered in a few lines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <sstream>

#include "compare/render_compare.h"
#include "fixtures.h"
#include "tests/support/unwrap.h"
#include "util/text_layout.h"

using namespace cudadiag::compare;
using compare_test::find_case;
using compare_test::fleet_of;
using compare_test::result_of;
using cudadiag::report::json;

namespace {

void fail_attention(json& doc) {
  auto& r = result_of(doc, "fa.seed.bm64-bn64-w4.s64");
  r["outcome"] = "cuda_error";
  r["expectation_met"] = false;
  r["error"] = {{"code", 700}, {"name", "cudaErrorIllegalAddress"}};
  r["repeats"] = {{"runs", 1}, {"failures", 1}, {"histogram", {{"cuda_error", 1}}}};
  doc["verdict"] = {{"status", "suspect"}, {"reasons", {"fa.seed.bm64-bn64-w4.s64: expected ok"}}};
}

std::size_t count_of(const std::string& text, const std::regex& re) {
  return static_cast<std::size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

std::size_t longest_line(const std::string& text) {
  std::istringstream in(text);
  std::size_t longest = 0;
  for (std::string line; std::getline(in, line);) longest = std::max(longest, cudadiag::text::display_width(line));
  return longest;
}

// Repeats of index_select.head_slice in the synthetic fixture: `failures` of 50 runs.
void repeat_index_select(json& doc, int failures) {
  auto& r = doc["results"][1];
  r["repeats"] = {{"runs", 50}, {"failures", failures}, {"histogram", {{"ok", 50 - failures}, {"mismatch", failures}}}};
  r["outcome"] = failures ? "mismatch" : "ok";
  r["expectation_met"] = failures == 0;
}

}  // namespace

TEST_CASE("fleet: 200 real reports, one node on another driver failing one case", "[compare][fleet]") {
  auto set = fleet_of("device_h100.json", 200, [](std::size_t i, json& doc) {
    if (i != 137) return;
    doc["driver"]["version"] = "575.57.08";
    fail_attention(doc);
  });
  const CompareOptions options;
  const auto c = compare_digests(std::move(set), options);
  CHECK(c.verdict.status == cudadiag::report::VerdictStatus::host_specific);
  REQUIRE_FALSE(c.suspects.empty());
  CHECK(c.suspects[0].field == "driver version");
  const auto& cs = find_case(c, "fa.seed.bm64-bn64-w4.s64");
  CHECK(cs.failing == std::vector<std::size_t>{137});
  REQUIRE(c.baseline.outliers.size() == 1);
  CHECK(c.baseline.outliers[0].report == 137);

  REQUIRE(c.grouping.groups.size() == 2);
  CHECK(c.grouping.groups[0].hosts.size() == 199);
  CHECK(c.grouping.groups[0].outcomes.empty());
  CHECK(c.grouping.groups[1].hosts == std::vector<std::size_t>{137});
  CHECK(c.grouping.groups[1].verdict == "suspect");
  REQUIRE(c.grouping.groups[1].outcomes.size() == 1);
  CHECK_THAT(c.grouping.groups[1].outcomes[0], Catch::Contains("cuda_error 700") && Catch::Contains("most hosts: ok"));
  REQUIRE(c.grouping.environments.size() == 2);
  CHECK(c.grouping.environments[1].differences ==
        std::vector<std::string>{"driver version = 575.57.08 (most hosts: 580.159.04)"});
  CHECK(c.grouping.verdicts.at("healthy") == 199);
  CHECK(c.grouping.verdicts.at("suspect") == 1);
  // Its environment (one host) fails 1 of 1 against 0 of 199: p = 1/200, below 0.05 / 2.
  REQUIRE(c.grouping.tests.size() == 1);
  CHECK(c.grouping.tests[0].environment == 1);
  CHECK(c.grouping.tests[0].p == Approx(0.005));
  CHECK(c.grouping.tests[0].significant);

  const auto r = comparison_report(c, options, {"cudadiag", "compare"});
  REQUIRE(r.extra.find("comparison"));
  const auto cmp = cudadiag::report::to_json(*r.extra.find("comparison"));
  CHECK(cmp["reports"].size() == 200);
  CHECK(cmp["groups"][0]["members"].size() == 199);
  const auto raw = render_compare_text(r, false, true);  // every table (-v)
  const auto text = cudadiag::test::unwrapped(raw);  // values wrap at 80 columns
  const auto md = render_compare_md(r);
  CHECK(longest_line(raw) <= 80);
  for (const auto* out : {&raw, &md}) {
    INFO(*out);
    // The node that stands out is named; the 199 others are counted, never listed.
    CHECK_THAT(*out, Catch::Contains("node137"));
    CHECK(count_of(*out, std::regex("node[0-9]{3}")) < 25);
    CHECK(longest_line(*out) < 600);
  }
  CHECK_THAT(text, Catch::Contains("200 reports in 2 group(s) of identical hosts; 1 host stands out"));
  CHECK_THAT(text, Catch::Contains("node137 stands out from the majority in 1 case(s)"));
  CHECK_THAT(text, Catch::Contains("580.159.04: 199 (node000); 575.57.08: 1 (node137)"));
  CHECK_THAT(md, Catch::Contains("### Groups (same environment, outcomes and own verdict)"));
  CHECK_THAT(md, Catch::Contains("| G1 | 199 | node000 | E1 | healthy | — |"));
}

TEST_CASE("fleet: 16 hosts that each differ in many cases read in one screen without -v", "[compare][fleet]") {
  // Every host fails its own dozen of the 49 cases: 16 groups, each differing in 12 cases.
  auto set = fleet_of("device_h100.json", 16, [](std::size_t i, json& doc) {
    doc["driver"]["version"] = "580.159." + std::to_string(10 + i);
    auto& results = doc["results"];
    for (std::size_t k = 0; k < 12; ++k) {
      auto& r = results[(i * 3 + k) % results.size()];
      r["outcome"] = "cuda_error";
      r["expectation_met"] = false;
      r["error"] = {{"code", 700}, {"name", "cudaErrorIllegalAddress"}};
      r["repeats"] = {{"runs", 1}, {"failures", 1}, {"histogram", {{"cuda_error", 1}}}};
    }
  });
  const auto c = compare_digests(std::move(set), {});
  const auto r = comparison_report(c, {}, {"cudadiag", "compare"});
  const auto summary = render_compare_text(r);
  const auto lines = static_cast<std::size_t>(std::count(summary.begin(), summary.end(), '\n'));
  INFO(summary);
  CHECK(lines <= 40);
  CHECK(longest_line(summary) <= 80);
  CHECK_THAT(summary, Catch::StartsWith("cudadiag compare: host_specific\n"));
  CHECK_THAT(summary, Catch::Contains("more (-v lists them)") && Catch::Contains("… and 10 more groups"));
  CHECK_THAT(summary, Catch::Contains("Every table: add -v, or keep the JSON report"));
  // -v: every table, still within the width, and far longer.
  const auto detailed = render_compare_text(r, false, true);
  CHECK(longest_line(detailed) <= 80);
  CHECK_THAT(detailed, Catch::Contains("Environment (≠ marks a difference)") && Catch::Contains("Suspects"));
  CHECK(static_cast<std::size_t>(std::count(detailed.begin(), detailed.end(), '\n')) > 2 * lines);
}

TEST_CASE("fleet: a host failing far more often than the rest is host-specific", "[compare][fleet]") {
  auto set = fleet_of("identical_a.json", 20, [](std::size_t i, json& doc) { repeat_index_select(doc, i == 4 ? 12 : 0); });
  const auto c = compare_digests(std::move(set), {});
  CHECK(c.verdict.status == cudadiag::report::VerdictStatus::host_specific);
  const auto& cs = find_case(c, "index_select.head_slice");
  CHECK(cs.kind == CaseKind::host_specific);
  CHECK(cs.failing == std::vector<std::size_t>{4});
  REQUIRE(cs.rate_tests.size() == 1);
  const auto& t = cs.rate_tests[0];
  CHECK(t.against_rest);
  CHECK((t.failures_a == 12 && t.runs_a == 50 && t.failures_b == 0 && t.runs_b == 950));
  // Bonferroni over the 20 hosts inside the case, Holm over the 4 cases compared.
  CHECK(c.outcomes.cases_compared == 4);
  CHECK(t.alpha == Approx(0.05 / 4 / 20));
  CHECK(t.significant);
  CHECK_THAT(cs.explanation, Catch::Contains("Bonferroni-corrected for 20 hosts and Holm-corrected for 4 case(s) compared"));
}

TEST_CASE("fleet: one failure in 50 runs on one of 20 hosts is flaky, not the host", "[compare][fleet]") {
  auto set = fleet_of("identical_a.json", 20, [](std::size_t i, json& doc) { repeat_index_select(doc, i == 4 ? 1 : 0); });
  const auto c = compare_digests(std::move(set), {});
  CHECK(c.verdict.status == cudadiag::report::VerdictStatus::flaky);
  const auto& cs = find_case(c, "index_select.head_slice");
  CHECK(cs.kind == CaseKind::flaky);
  REQUIRE(cs.rate_tests.size() == 1);
  CHECK(cs.rate_tests[0].p == Approx(0.05));  // 50 of the 1000 runs are this host's
  CHECK_FALSE(cs.rate_tests[0].significant);
}

TEST_CASE("fleet: hosts on another driver that fail together are one environment, tested", "[compare][fleet]") {
  auto set = fleet_of("identical_a.json", 30, [](std::size_t i, json& doc) {
    if (i % 6 != 3) return;
    doc["driver"]["version"] = "575.57.08";
    auto& r = doc["results"][0];
    r["outcome"] = "cuda_error";
    r["expectation_met"] = false;
    r["error"] = {{"code", 1}, {"name", "cudaErrorInvalidValue"}};
  });
  const auto c = compare_digests(std::move(set), {});
  CHECK(c.verdict.status == cudadiag::report::VerdictStatus::host_specific);
  CHECK(c.suspects.at(0).field == "driver version");
  REQUIRE(c.grouping.environments.size() == 2);
  CHECK(c.grouping.environments[1].hosts == std::vector<std::size_t>{3, 9, 15, 21, 27});
  REQUIRE(c.grouping.tests.size() == 1);
  const auto& t = c.grouping.tests[0];
  CHECK((t.failures == 5 && t.runs == 5 && t.rest_failures == 0 && t.rest_runs == 25));
  CHECK(t.significant);
  // The rate test is a detail (-v); the summary keeps the verdict's reasons.
  const auto text = cudadiag::test::unwrapped(render_compare_text(comparison_report(c, {}, {}), false, true));
  CHECK_THAT(text, Catch::Contains("E2 (5 hosts)"));
  CHECK_THAT(text, Catch::Contains("misses its expectation (ok) on 5 hosts: cuda_error 1 cudaErrorInvalidValue (node003, "
                                   "node009, node015 and 2 more); meets it on 25 hosts"));
}

TEST_CASE("fleet: identical hosts are one group and the same", "[compare][fleet]") {
  const auto c = compare_digests(fleet_of("identical_a.json", 6), {});
  CHECK(c.verdict.status == cudadiag::report::VerdictStatus::same);
  REQUIRE(c.grouping.groups.size() == 1);
  CHECK(c.grouping.groups[0].hosts.size() == 6);
  CHECK(c.grouping.environments.size() == 1);
  CHECK(c.grouping.tests.empty());
  const auto text = render_compare_text(comparison_report(c, {}, {}));
  CHECK_THAT(text, Catch::StartsWith("cudadiag compare: same\nNo difference that matters between 6 reports"));
}

TEST_CASE("fleet: health counters group as zero or non-zero", "[compare][fleet]") {
  auto set = fleet_of("fleet_01.json", 8, [](std::size_t i, json& doc) {
    if (i >= 2) return;
    doc["devices"][0]["nvml"]["ecc_errors"]["volatile"]["corrected"] = 3 + static_cast<int>(i);
  });
  const auto c = compare_digests(std::move(set), {});
  REQUIRE(c.grouping.environments.size() == 2);
  CHECK(c.grouping.environments[1].hosts == std::vector<std::size_t>{0, 1});
  CHECK_THAT(c.grouping.environments[1].differences.at(0), Catch::Contains("gpu0 ECC errors = volatile.corrected=3"));
}

TEST_CASE("fleet: one report per GPU of a host pairs across the reports", "[compare][fleet]") {
  // `repro --devices i` on a two-GPU host: each report ran on one GPU.
  auto set = fleet_of("identical_a.json", 4, [](std::size_t i, json& doc) {
    doc["host"]["hostname"] = "gpu-host";
    auto second = doc["devices"][0];
    second["index"] = 1;
    second["uuid"] = "GPU-second";
    doc["devices"].push_back(second);
    if (i % 2 == 0) return;
    for (auto& r : doc["results"]) {
      r["device_index"] = 1;
      r["device"] = "GPU-second";
    }
  });
  const auto c = compare_digests(std::move(set), {});
  CHECK(c.pairing.unpaired.empty());
  CHECK(c.outcomes.cases.size() == 4);
  CHECK(c.verdict.status == cudadiag::report::VerdictStatus::same);
  CHECK(c.labels == std::vector<std::string>{"node000.json", "node001.json", "node002.json", "node003.json"});
}

TEST_CASE("fleet: timing notes name the hosts slower than the median, not the fastest", "[compare][fleet]") {
  // 20 timed runs per host inside the child; node007's take 90 ms each.
  auto set = fleet_of("identical_a.json", 10, [](std::size_t i, json& doc) {
    const double ms = i == 7 ? 90.0 : 25.0 + static_cast<double>(i);
    doc["results"][2]["repeats"] = {{"runs", 20}, {"failures", 0}, {"failure_rate", 0.0}, {"seconds", 20 * ms / 1000}};
    doc["results"][2]["duration_ms"] = 900.0 - 50.0 * static_cast<double>(i);  // process start: never compared
  });
  const auto c = compare_digests(std::move(set), {});
  REQUIRE(c.outcomes.notes.size() == 1);
  CHECK_THAT(c.outcomes.notes[0], Catch::StartsWith("attention.fa_s512_d128 [default] @gpu0: 1 host took more than "
                                                    "2x the median 30 ms per run (slowest: node007, 90 ms; kernel time "
                                                    "inside the child, 10 hosts timed)"));
}

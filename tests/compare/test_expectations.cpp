// Compare judges each host's result by its own expectation: healthy hosts of different
// builds, GPUs and race rates are `same`; a host that misses an expectation is named.
// Real reports in tests/fixtures/compare: device_h100.json and device_h200.json (schema
// 1.0.0, build 33e244cc92f0) and device_h100_s11.json and device_h200_s11.json (schema
// 1.1.0, build e50c8068a998): `cudadiag repro --redact` of the default suite on an
// NVIDIA H100 80GB HBM3 and an NVIDIA H200, driver 580.159.04, all healthy. Where a kind
// of report is missing, a copy of a real one is edited in the test, as each test says.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "compare/host_list.h"
#include "compare/render_compare.h"
#include "fixtures.h"
#include "util/atomic_file.h"

using namespace cudadiag;
using namespace cudadiag::compare;
using compare_test::find_case;
using compare_test::fixture;
using compare_test::result_of;
using report::json;
using report::VerdictStatus;

namespace {

json doc_of(const std::string& name) { return json::parse(read_file_or_stdin(fixture(name))); }

// A comparison of report documents, as `cudadiag compare a.json b.json ...` reads them.
Comparison compare_docs(const std::vector<std::pair<std::string, json>>& docs, const CompareOptions& options = {}) {
  ReportSet set;
  for (const auto& [file, doc] : docs) set.reports.push_back(read_digest(doc.dump(), file, *set.tables));
  return compare_digests(std::move(set), options);
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

std::size_t kind_count(const Comparison& c, CaseKind k) {
  return static_cast<std::size_t>(std::count_if(c.outcomes.cases.begin(), c.outcomes.cases.end(),
                                                [&](const CaseAnalysis& a) { return a.kind == k; }));
}

// The race case of the default suite with `failures` of `runs` runs wrong, as repro
// writes it: mismatch when any run failed, ok otherwise; "ok|mismatch" is met either way.
void set_race(json& doc, int failures, int runs = 200) {
  auto& r = result_of(doc, "fa.drop-barrier");
  r["outcome"] = failures > 0 ? "mismatch" : "ok";
  r["expectation_met"] = true;
  auto& rep = r["repeats"];
  rep["runs"] = runs;
  rep["failures"] = failures;
  rep["failure_rate"] = static_cast<double>(failures) / runs;
  json hist = json::object();
  if (runs - failures > 0) hist["ok"] = runs - failures;
  if (failures > 0) hist["mismatch"] = failures;
  rep["histogram"] = hist;
}

// The two real reports of the current build (schema 1.1.0) on an H100 and an H200.
const char* kH100 = "device_h100_s11.json";
const char* kH200 = "device_h200_s11.json";

}  // namespace

TEST_CASE("real reports: an H100 of schema 1.0.0 against an H200 of 1.1.0, both healthy, are the same",
          "[compare][expectations][real]") {
  // The older build records no repeats for tma.seed-seq1.encode; the newer counts its
  // expected error as 1 failed run of 1. Both met the expectation: no difference.
  const auto older = doc_of("device_h100.json"), newer = doc_of(kH200);
  REQUIRE(older["schema_version"] == "1.0.0");
  REQUIRE(newer["schema_version"] == "1.1.0");
  const auto c = compare_docs({{"h100.json", older}, {"h200.json", newer}});
  INFO(join(c.verdict.reasons, "\n"));
  CHECK(c.verdict.status == VerdictStatus::same);
  CHECK(report::exit_code_for(c.verdict.status) == 0);
  CHECK(kind_count(c, CaseKind::host_specific) == 0);
  CHECK(kind_count(c, CaseKind::flaky) == 0);
  CHECK(find_case(c, "tma.seed-seq1.encode").kind == CaseKind::agree);
  CHECK(c.suspects.empty());
  // The comparison is weaker, and says why; the builds are no finding.
  CHECK(any_contains(c.build_differences, "different schema versions: 1.0.0 (h100.json), 1.1.0 (h200.json)"));
  CHECK(any_contains(c.build_differences, "different cudadiag builds"));
  CHECK(any_contains(c.verdict.reasons, "comparison is weaker: reports of different schema versions"));
  CHECK(any_contains(c.notes, "comparison is weaker"));
  CHECK(c.weaknesses.empty());
}

TEST_CASE("real reports: two healthy reports of the current build are the same", "[compare][expectations][real]") {
  const auto a = doc_of(kH100), b = doc_of(kH200);
  const auto c = compare_docs({{"h100.json", a}, {"h200.json", b}});
  INFO(join(c.verdict.reasons, "\n"));
  CHECK(c.verdict.status == VerdictStatus::same);
  CHECK(report::exit_code_for(c.verdict.status) == 0);
  CHECK(c.build_differences.empty());
  CHECK(c.suspects.empty());  // model, memory and VBIOS differ, but no case does
  // The race meets its expectation on both: its rates are a note, not a test.
  const auto& race = find_case(c, "fa.drop-barrier");
  CHECK(race.kind == CaseKind::agree);
  CHECK(race.expected_rate);
  CHECK(any_contains(c.notes, "fa.drop-barrier [default] @gpu0: failure rate "));
  CHECK(any_contains(c.notes, "rates depend on the GPU and its clocks"));
}

TEST_CASE("real reports: a report compared with itself is the same, exit 0", "[compare][expectations][real]") {
  for (const char* name : {kH100, kH200, "device_h100.json"}) {
    INFO(name);
    const auto d = doc_of(name);
    const auto c = compare_docs({{"a.json", d}, {"a.json", d}});
    CHECK(c.verdict.status == VerdictStatus::same);
    CHECK(report::exit_code_for(c.verdict.status) == 0);
    CHECK(kind_count(c, CaseKind::flaky) == 0);
    CHECK(kind_count(c, CaseKind::host_specific) == 0);
  }
}

TEST_CASE("real reports: tma.seed-seq1.encode passing on one host and failing on the other is host-specific",
          "[compare][expectations][real]") {
  // Derived: a copy of the real H200 report whose driver accepts the seq_len 1 descriptor
  // (encode returns success: outcome ok, the expected error:invalid_value|error:1 missed).
  auto bad = doc_of(kH200);
  auto& r = result_of(bad, "tma.seed-seq1.encode");
  r["outcome"] = "ok";
  r["expectation_met"] = false;
  r["error"] = nullptr;
  if (r.contains("repeats")) r["repeats"] = {{"runs", 1}, {"failures", 0}, {"failure_rate", 0.0}, {"histogram", {{"ok", 1}}}};
  bad["driver"]["version"] = "575.57.08";
  const auto c = compare_docs({{"h100.json", doc_of(kH100)}, {"h200.json", bad}});
  CHECK(c.verdict.status == VerdictStatus::host_specific);
  const auto& cs = find_case(c, "tma.seed-seq1.encode");
  CHECK(cs.kind == CaseKind::host_specific);
  CHECK(cs.failing == std::vector<std::size_t>{1});
  CHECK(cs.passing == std::vector<std::size_t>{0});
  CHECK_THAT(cs.explanation, Catch::Contains("misses its expectation (error:invalid_value|error:1) on h200.json (ok)"));
  CHECK(any_contains(c.verdict.reasons, "tma.seed-seq1.encode [default] @gpu0: misses its expectation"));
  CHECK(kind_count(c, CaseKind::host_specific) == 1);
  // Fields that differ line up with the one case that differs, and only with it.
  REQUIRE_FALSE(c.suspects.empty());
  for (const auto& s : c.suspects) CHECK(s.cases == std::vector<std::string>{"tma.seed-seq1.encode [default] @gpu0"});
}

TEST_CASE("real reports: a host whose race never shows (0 of 200) is named", "[compare][expectations][real]") {
  auto silent = doc_of(kH200);
  set_race(silent, 0);  // as repro writes it: outcome ok, and "ok|mismatch" is met
  auto showing = doc_of(kH100);
  set_race(showing, 55);
  {
    const auto c = compare_docs({{"h100.json", showing}, {"h200.json", silent}});
    CHECK(c.verdict.status == VerdictStatus::host_specific);
    const auto& race = find_case(c, "fa.drop-barrier");
    CHECK(race.kind == CaseKind::host_specific);
    CHECK(race.failing == std::vector<std::size_t>{1});
    REQUIRE(race.rate_tests.size() == 1);
    CHECK(race.rate_tests[0].counted == Counted::failures);
    CHECK(race.rate_tests[0].significant);
    CHECK_THAT(race.explanation, Catch::Contains("never shows on h200.json (ok (0/200 failed))"));
    CHECK(any_contains(c.verdict.reasons, "fa.drop-barrier [default] @gpu0: the failure it expects at a rate "
                                          "(ok|mismatch) never shows on h200.json"));
  }
  {
    // A producer that judges the race itself: 0 of 200 misses "ok|mismatch".
    result_of(silent, "fa.drop-barrier")["expectation_met"] = false;
    const auto c = compare_docs({{"h100.json", showing}, {"h200.json", silent}});
    CHECK(c.verdict.status == VerdictStatus::host_specific);
    const auto& race = find_case(c, "fa.drop-barrier");
    CHECK(race.kind == CaseKind::host_specific);
    CHECK(race.failing == std::vector<std::size_t>{1});
  }
  {
    // It fails with another error class there: named too.
    auto other = doc_of(kH200);
    auto& r = result_of(other, "fa.drop-barrier");
    set_race(other, 70);
    r["outcome"] = "cuda_error";
    r["expectation_met"] = false;
    r["error"] = {{"code", 700}, {"name", "cudaErrorIllegalAddress"}, {"class", "memory_fault"}};
    r["repeats"]["histogram"] = {{"ok", 130}, {"mismatch", 69}, {"cuda_error", 1}};
    const auto c = compare_docs({{"h100.json", showing}, {"h200.json", other}});
    CHECK(c.verdict.status == VerdictStatus::host_specific);
    CHECK(find_case(c, "fa.drop-barrier").failing == std::vector<std::size_t>{1});
  }
}

TEST_CASE("real reports: race rates of 55/200 on an H100 and 75/200 on an H200 are the same, with a note",
          "[compare][expectations][real]") {
  // Fisher's p for 55/200 against 75/200 is 0.042: below 0.05, once a "hardware suspect".
  auto h100 = doc_of(kH100), h200 = doc_of(kH200);
  set_race(h100, 55);
  set_race(h200, 75);
  const auto c = compare_docs({{"h100.json", h100}, {"h200.json", h200}});
  INFO(join(c.verdict.reasons, "\n"));
  CHECK(c.verdict.status == VerdictStatus::same);
  CHECK(report::exit_code_for(c.verdict.status) == 0);
  const auto& race = find_case(c, "fa.drop-barrier");
  CHECK(race.kind == CaseKind::agree);
  CHECK(race.rate_tests.empty());
  CHECK(c.suspects.empty());
  CHECK(any_contains(c.notes, "fa.drop-barrier [default] @gpu0: failure rate 27.5% (55/200) on h100.json, "
                              "37.5% (75/200) on h200.json: expected to fail at a rate (ok|mismatch) and met on "
                              "every host; rates depend on the GPU and its clocks"));
  const auto r = comparison_report(c, {}, {"cudadiag", "compare"});
  CHECK_THAT(render_compare_text(r), Catch::Contains("cudadiag compare: same"));
  CHECK_THAT(render_compare_text(r), Catch::Contains("27.5% (55/200) on h100.json"));
}

TEST_CASE("expectations: one rate test among many cases is Holm-corrected", "[compare][expectations]") {
  // A case expected to pass that fails on both hosts, 55/200 and 75/200 (p = 0.042):
  // among 49 cases compared that is chance (level 0.05 / 49), so flaky, not the host.
  auto a = doc_of(kH100), b = doc_of(kH200);
  for (auto* d : {&a, &b}) {
    auto& r = result_of(*d, "fa.seed.bm64-bn64-w4.s64");
    const int failures = d == &a ? 55 : 75;
    r["outcome"] = "mismatch";
    r["expectation_met"] = false;
    r["repeats"] = {{"runs", 200}, {"failures", failures}, {"failure_rate", failures / 200.0},
                    {"histogram", {{"ok", 200 - failures}, {"mismatch", failures}}}};
  }
  const auto c = compare_docs({{"h100.json", a}, {"h200.json", b}});
  const auto& cs = find_case(c, "fa.seed.bm64-bn64-w4.s64");
  REQUIRE(cs.rate_tests.size() == 1);
  CHECK(cs.rate_tests[0].p == Approx(0.042).margin(0.002));
  CHECK(cs.rate_tests[0].alpha == Approx(0.05 / static_cast<double>(c.outcomes.cases_compared)));
  CHECK(c.outcomes.cases_compared >= 40);
  CHECK_FALSE(cs.rate_tests[0].significant);
  CHECK(cs.kind == CaseKind::flaky);
  CHECK_THAT(cs.explanation, Catch::Contains("Holm-corrected for"));
  CHECK(c.verdict.status == VerdictStatus::flaky);
  CHECK(c.suspects.empty());
}

TEST_CASE("expectations: fields one build adds are unknown, never zero", "[compare][expectations]") {
  // The older report has no repeats for a case that failed as expected; the newer one
  // counts that failure. Unjudged, the outcome itself still counts as one failed run.
  auto older = doc_of("device_h100.json");
  auto newer = doc_of("device_h100.json");
  newer["host"]["hostname"] = "other";
  auto& r = result_of(newer, "tma.seed-seq1.encode");
  r["repeats"] = {{"runs", 1}, {"failures", 1}, {"failure_rate", 1.0}, {"histogram", {{"cuda_error", 1}}}};
  auto c = compare_docs({{"old.json", older}, {"new.json", newer}});
  CHECK(find_case(c, "tma.seed-seq1.encode").kind == CaseKind::agree);
  CHECK(c.verdict.status == VerdictStatus::same);
  // Without expectations at all, the same: the error is one failed run on both sides.
  for (auto* d : {&older, &newer}) {
    auto& x = result_of(*d, "tma.seed-seq1.encode");
    x["expected"] = "";
    x["expectation_met"] = nullptr;
  }
  c = compare_docs({{"old.json", older}, {"new.json", newer}});
  const auto& cs = find_case(c, "tma.seed-seq1.encode");
  CHECK(cs.kind == CaseKind::common_failure);
  CHECK(cs.hosts[0].failures == 1);
  CHECK(cs.hosts[1].failures == 1);
  CHECK(c.verdict.status == VerdictStatus::same);
}

TEST_CASE("expectations: different builds alone are the same, with the reason said", "[compare][expectations]") {
  auto a = doc_of("identical_a.json"), b = doc_of("identical_b.json");
  b["tool"]["version"] = "0.2.0";
  b["tool"]["git_revision"] = "0123456789ab";
  const auto c = compare_docs({{"a.json", a}, {"b.json", b}});
  CHECK(c.verdict.status == VerdictStatus::same);
  CHECK(c.weaknesses.empty());
  CHECK(any_contains(c.verdict.reasons, "comparison is weaker: different cudadiag versions"));
  CHECK(any_contains(c.verdict.reasons, "comparison is weaker: different cudadiag builds"));
  CHECK(c.suspects.empty());
}

TEST_CASE("expectations: timing notes compare the kernels' own time, never process start",
          "[compare][expectations]") {
  auto a = doc_of(kH100), b = doc_of(kH200);
  // Process start dominates duration_ms: 50x apart, and no note (the in-child times of
  // the real reports are left out here).
  for (auto* d : {&a, &b})
    for (auto& r : (*d)["results"]) {
      r["duration_ms"] = d == &a ? 1.0 : 50.0;
      if (r.contains("repeats") && r["repeats"].is_object()) r["repeats"].erase("seconds");
    }
  auto c = compare_docs({{"h100.json", a}, {"h200.json", b}});
  CHECK_FALSE(any_contains(c.notes, "ms per run"));
  CHECK_FALSE(any_contains(c.notes, "beyond the 2x threshold"));
  // The repeats' in-child time: 200 runs in 0.1 s against 200 runs in 0.5 s.
  result_of(a, "fa.drop-barrier")["repeats"]["seconds"] = 0.1;
  result_of(b, "fa.drop-barrier")["repeats"]["seconds"] = 0.5;
  c = compare_docs({{"h100.json", a}, {"h200.json", b}});
  CHECK(any_contains(c.notes, "fa.drop-barrier [default] @gpu0: 2.5 ms per run on h200.json vs 0.5 ms on h100.json "
                              "(5.0x, beyond the 2x threshold; kernel time inside the child, 200 and 200 runs)"));
  // Too little to tell: a handful of runs, or a few milliseconds in all.
  CompareOptions o;
  o.min_timed_runs = 201;
  CHECK_FALSE(any_contains(compare_docs({{"h100.json", a}, {"h200.json", b}}, o).notes, "ms per run"));
  result_of(a, "fa.drop-barrier")["repeats"]["seconds"] = 0.001;
  result_of(b, "fa.drop-barrier")["repeats"]["seconds"] = 0.005;
  CHECK_FALSE(any_contains(compare_docs({{"h100.json", a}, {"h200.json", b}}).notes, "ms per run"));
}

TEST_CASE("expectations: a fleet of healthy hosts whose race rates differ is one group and the same",
          "[compare][expectations][fleet]") {
  auto set = compare_test::fleet_of(kH100, 40, [](std::size_t i, json& doc) { set_race(doc, 40 + static_cast<int>(i)); });
  const auto c = compare_digests(std::move(set), {});
  CHECK(c.verdict.status == VerdictStatus::same);
  CHECK(find_case(c, "fa.drop-barrier").kind == CaseKind::agree);
  CHECK(c.grouping.groups.size() == 1);
  for (const auto& t : c.grouping.tests) CHECK_FALSE(t.significant);
  CHECK(any_contains(c.notes, "fa.drop-barrier [default] @gpu0: failure rate 20% to 39.5% across 40 hosts"));
}

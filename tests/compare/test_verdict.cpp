#include <catch2/catch.hpp>

#include <algorithm>

#include "fixtures.h"

using namespace cudadiag;
using namespace cudadiag::compare;
using compare_test::compare_fixtures;
using compare_test::find_case;
using compare_test::load_fixtures;

namespace {

bool verdict_reasons_contain(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

void set_repeats(cudadiag::report::Result& r, int runs, int failures) {
  cudadiag::report::RepeatStats s;
  s.runs = runs;
  s.failures = failures;
  s.failure_rate = static_cast<double>(failures) / runs;
  r.repeats = s;
  r.outcome = failures ? cudadiag::report::Outcome::cuda_error : cudadiag::report::Outcome::ok;
  r.expectation_met = failures == 0;
}

}  // namespace

TEST_CASE("verdict: identical reports are the same", "[compare][verdict]") {
  auto reports = load_fixtures({"identical_a.json", "identical_b.json"});
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::same);
  CHECK(report::exit_code_for(c.verdict.status) == 0);
  CHECK(c.suspects.empty());
  CHECK(c.weaknesses.empty());
  // Hostnames, UUIDs, serials, PCI ids and timestamps differ but are not findings.
  for (const auto& row : c.environment) CHECK_FALSE(row.differs);
  CHECK(c.outcomes.cases.size() == 4);
  CHECK(c.notes.empty());  // 25 ms vs 31 ms is within the 2x threshold
}

TEST_CASE("verdict: a failure on one host lines up with its driver", "[compare][verdict]") {
  auto reports = load_fixtures({"driver_good.json", "driver_bad.json"});
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::host_specific);
  CHECK(report::exit_code_for(c.verdict.status) == 1);
  const auto& tma = find_case(c, "tma.ragged_prefill_seqlen1");
  CHECK(tma.kind == CaseKind::host_specific);
  CHECK(tma.failing == std::vector<std::size_t>{1});
  CHECK(tma.passing == std::vector<std::size_t>{0});
  CHECK(tma.error_differs == false);
  CHECK(tma.outcome_differs);
  REQUIRE(c.suspects.size() >= 2);
  CHECK(c.suspects[0].field == "driver version");
  CHECK_THAT(c.suspects[0].why, Catch::Contains("575.57.08"));
  const auto kernel = std::find_if(c.suspects.begin(), c.suspects.end(),
                                   [](const Suspect& s) { return s.field == "kernel"; });
  REQUIRE(kernel != c.suspects.end());
  CHECK(kernel->score < c.suspects[0].score);
  CHECK(verdict_reasons_contain(c.verdict.reasons, "suspects, most likely first: driver version"));
  // 25 ms vs 80 ms of duration_ms, process start included: neither a finding nor a note.
  CHECK_FALSE(verdict_reasons_contain(c.notes, "attention.fa_s512_d128"));
  CHECK(find_case(c, "attention.fa_s512_d128").kind == CaseKind::agree);
  // A single run each: the note says how to tell host-specific from flaky.
  CHECK(verdict_reasons_contain(c.notes, "--repeat"));
}

TEST_CASE("verdict: a larger --time-factor silences the timing note", "[compare][verdict]") {
  auto reports = load_fixtures({"driver_good.json", "driver_bad.json"});
  // 50 runs timed inside the child: 1 ms per run against 3 ms.
  double seconds = 0.05;
  for (auto& r : reports) {
    auto& res = r.report.results[2];
    REQUIRE(res.case_id == "attention.fa_s512_d128");
    cudadiag::report::RepeatStats s;
    s.runs = 50;
    s.seconds = seconds;
    res.repeats = s;
    seconds = 0.15;
  }
  CHECK(verdict_reasons_contain(compare_fixtures(reports).notes, "attention.fa_s512_d128 [default] @gpu0: 3 ms per run"));
  CompareOptions o;
  o.time_factor = 4.0;
  const auto c = compare_fixtures(reports, o);
  CHECK_FALSE(verdict_reasons_contain(c.notes, "attention.fa_s512_d128"));
}

TEST_CASE("verdict: 3/50 against 4/50 is flaky, not significant", "[compare][verdict]") {
  auto reports = load_fixtures({"flaky_a.json", "flaky_b.json"});
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::flaky);
  const auto& cs = find_case(c, "index_select.head_slice");
  CHECK(cs.kind == CaseKind::flaky);
  REQUIRE(cs.rate_tests.size() == 1);
  CHECK(cs.rate_tests[0].failures_a == 3);
  CHECK(cs.rate_tests[0].failures_b == 4);
  CHECK(cs.rate_tests[0].p == Approx(1.0));
  CHECK_FALSE(cs.rate_tests[0].significant);
  CHECK_THAT(cs.explanation, Catch::Contains("not significant"));
  // The driver differs between these hosts, but nothing host-specific needs explaining.
  CHECK(c.suspects.empty());
}

TEST_CASE("verdict: one failure in a hundred against none is flaky and says so", "[compare][verdict]") {
  auto reports = load_fixtures({"flaky_a.json", "flaky_b.json"});
  set_repeats(reports[0].report.results[1], 100, 1);
  set_repeats(reports[1].report.results[1], 100, 0);
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::flaky);
  const auto& cs = find_case(c, "index_select.head_slice");
  REQUIRE(cs.rate_tests.size() == 1);
  CHECK(cs.rate_tests[0].p == Approx(1.0));
  CHECK(verdict_reasons_contain(c.verdict.reasons, "not significant"));
}

TEST_CASE("verdict: a significant rate difference is host-specific", "[compare][verdict]") {
  auto reports = load_fixtures({"flaky_a.json", "flaky_b.json"});
  set_repeats(reports[0].report.results[1], 100, 0);
  set_repeats(reports[1].report.results[1], 100, 10);
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::host_specific);
  const auto& cs = find_case(c, "index_select.head_slice");
  CHECK(cs.failing == std::vector<std::size_t>{1});
  REQUIRE(cs.rate_tests.size() == 1);
  CHECK(cs.rate_tests[0].p == Approx(0.0015420521254357006).epsilon(1e-6));
  CHECK(cs.rate_tests[0].significant);
  CHECK(c.suspects.at(0).field == "driver version");
}

TEST_CASE("verdict: the same failure everywhere is the code, not the machine", "[compare][verdict]") {
  auto reports = load_fixtures({"identical_a.json", "identical_b.json"});
  for (auto& r : reports) {
    auto& res = r.report.results[2];
    res.outcome = report::Outcome::cuda_error;
    res.expectation_met = false;
    res.error = cudadiag::report::ErrorInfo{};
    res.error->code = 700;
  }
  const auto c = compare_fixtures(reports);
  CHECK(find_case(c, "attention.fa_s512_d128").kind == CaseKind::common_failure);
  CHECK(c.verdict.status == report::VerdictStatus::same);
  CHECK(verdict_reasons_contain(c.verdict.reasons, "fail the same way on every host"));
}

TEST_CASE("verdict: different errors on every host are host-specific", "[compare][verdict]") {
  auto reports = load_fixtures({"identical_a.json", "identical_b.json"});
  int code = 700;
  for (auto& r : reports) {
    auto& res = r.report.results[2];
    res.outcome = report::Outcome::cuda_error;
    res.expectation_met = false;
    res.error = cudadiag::report::ErrorInfo{};
    res.error->code = code;
    code = 716;
  }
  const auto c = compare_fixtures(reports);
  const auto& cs = find_case(c, "attention.fa_s512_d128");
  CHECK(cs.kind == CaseKind::host_specific);
  CHECK(cs.error_differs);
  CHECK(c.verdict.status == report::VerdictStatus::host_specific);
}

TEST_CASE("verdict: other suites and tool versions are a config mismatch", "[compare][verdict]") {
  auto reports = load_fixtures({"suite_default.json", "suite_scenario.json"});
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::config_mismatch);
  CHECK(report::exit_code_for(c.verdict.status) == 1);
  CHECK(verdict_reasons_contain(c.verdict.reasons, "different suites"));
  CHECK(verdict_reasons_contain(c.verdict.reasons, "flashinfer-tma-seqlen1"));
  CHECK(verdict_reasons_contain(c.verdict.reasons, "different cudadiag versions"));
  CHECK(verdict_reasons_contain(c.verdict.reasons, "different cudadiag builds"));
}

TEST_CASE("verdict: a config mismatch rides along with a finding", "[compare][verdict]") {
  auto reports = load_fixtures({"driver_good.json", "driver_bad.json"});
  reports[1].report.tool.version = "0.2.0";
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::host_specific);
  CHECK(verdict_reasons_contain(c.verdict.reasons, "comparison is weaker: different cudadiag versions"));
}

TEST_CASE("verdict: a fleet of three names the outlier and its ECC errors", "[compare][verdict]") {
  auto reports = load_fixtures({"fleet_01.json", "fleet_02.json", "fleet_03.json"});
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::host_specific);
  REQUIRE(c.baseline.applies);
  REQUIRE(c.baseline.cases.size() == 1);
  CHECK(c.baseline.cases[0].baseline == "ok");
  CHECK(c.baseline.cases[0].agreeing == 2);
  REQUIRE(c.baseline.outliers.size() == 1);
  CHECK(c.baseline.outliers[0].report == 2);
  CHECK(verdict_reasons_contain(c.baseline.outliers[0].environment, "ECC errors"));
  CHECK(verdict_reasons_contain(c.verdict.reasons, "fleet-03 stands out"));
  REQUIRE_FALSE(c.suspects.empty());
  // Health counters higher on the failing host rank above everything else.
  CHECK(c.suspects[0].category == "health");
  CHECK(c.suspects[0].score > 95);
}

TEST_CASE("verdict: two reports have no baseline", "[compare][verdict]") {
  auto reports = load_fixtures({"driver_good.json", "driver_bad.json"});
  CHECK_FALSE(compare_fixtures(reports).baseline.applies);
}

TEST_CASE("verdict: a newer minor version compares, with its note", "[compare][verdict]") {
  auto reports = load_fixtures({"identical_a.json", "newer_minor.json"});
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::same);
  CHECK(verdict_reasons_contain(c.notes, "1.7.0"));
}

TEST_CASE("verdict: results missing on one host weaken the comparison", "[compare][verdict]") {
  auto reports = load_fixtures({"identical_a.json", "identical_b.json"});
  reports[1].report.results.pop_back();
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::config_mismatch);
  CHECK(verdict_reasons_contain(c.verdict.reasons, "no partner"));
}

TEST_CASE("verdict: a health counter lower on the failing host is no lead", "[compare][verdict]") {
  auto reports = load_fixtures({"fleet_03.json", "fleet_01.json"});
  // fleet-03 has the ECC errors; make fleet-01 the one that fails.
  reports[0].report.results[2].outcome = report::Outcome::ok;
  reports[0].report.results[2].expectation_met = true;
  reports[0].report.results[2].error.reset();
  reports[1].report.results[2].outcome = report::Outcome::cuda_error;
  reports[1].report.results[2].expectation_met = false;
  const auto c = compare_fixtures(reports);
  REQUIRE(c.verdict.status == report::VerdictStatus::host_specific);
  for (const auto& s : c.suspects)
    if (s.category == "health") CHECK(s.score < 95);
}

TEST_CASE("verdict: two environment-only reports compare their environments", "[compare][verdict]") {
  auto reports = load_fixtures({"driver_good.json", "driver_bad.json"});
  for (auto& r : reports) {
    r.report.results.clear();
    r.report.invocation.command = "env";
  }
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::same);
  CHECK(c.weaknesses.empty());
  CHECK(verdict_reasons_contain(c.notes, "only the environments are compared"));
  bool driver_differs = false;
  for (const auto& row : c.environment) driver_differs = driver_differs || (row.field == "driver version" && row.differs);
  CHECK(driver_differs);
}

TEST_CASE("verdict: a report without results against one with results is weaker", "[compare][verdict]") {
  auto reports = load_fixtures({"identical_a.json", "identical_b.json"});
  reports[1].report.results.clear();
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::config_mismatch);
  CHECK(verdict_reasons_contain(c.verdict.reasons, "gpu-node-b has no results"));
}

TEST_CASE("verdict: a case skipped on one host is a weakness, not a failure", "[compare][verdict]") {
  auto reports = load_fixtures({"identical_a.json", "identical_b.json"});
  auto& res = reports[1].report.results[0];
  res.outcome = report::Outcome::skipped;
  res.expectation_met = false;
  res.reason = "not sm_90";
  const auto c = compare_fixtures(reports);
  CHECK(c.verdict.status == report::VerdictStatus::config_mismatch);
  CHECK(verdict_reasons_contain(c.verdict.reasons, "skipped on gpu-node-b"));
  CHECK(find_case(c, "tma.ragged_prefill_seqlen1").kind == CaseKind::agree);
}

namespace {

// The report's results run once more on a second GPU (index 1); returns the first GPU's
// first result, whose case and profile the callers fail.
report::json on_two_gpus(report::json& doc) {
  auto second = doc["devices"][0];
  second["index"] = 1;
  second["uuid"] = "GPU-second";
  doc["devices"].push_back(second);
  const auto first_results = doc["results"];
  for (auto r : first_results) {
    r["device"] = "GPU-second";
    r["device_index"] = 1;
    doc["results"].push_back(r);
  }
  return first_results[0];
}

void fail(report::json& r) {
  r["outcome"] = "cuda_error";
  r["expectation_met"] = false;
}

}  // namespace

TEST_CASE("verdict: a GPU whose results differ from its report's other GPUs is named first", "[compare][verdict]") {
  // Every host ran the suite on two GPUs; on node001 one case fails on GPU 1 only.
  auto set = compare_test::fleet_of("identical_a.json", 3, [](std::size_t i, report::json& doc) {
    const auto first = on_two_gpus(doc);
    if (i != 1) return;
    for (auto& r : doc["results"])
      if (r["case_id"] == first["case_id"] && r["profile"] == first["profile"] && r["device_index"] == 1) fail(r);
  });
  const auto c = compare_digests(std::move(set), {});
  REQUIRE_FALSE(c.verdict.reasons.empty());
  CHECK_THAT(c.verdict.reasons.front(), Catch::StartsWith("node001: GPU 1 stands out: 1 run(s) failed there and "
                                                          "passed on the other GPUs: tma.ragged_prefill_seqlen1 "));
  CHECK_THAT(c.verdict.reasons.front(), Catch::EndsWith(" under default"));
  CHECK(std::count_if(c.verdict.reasons.begin(), c.verdict.reasons.end(),
                      [](const std::string& l) { return l.find("stands out: ") != std::string::npos; }) == 1);

  // The same failure on both GPUs of a host is that host's, not one GPU's: no GPU named.
  auto both = compare_test::fleet_of("identical_a.json", 2, [](std::size_t i, report::json& doc) {
    const auto first = on_two_gpus(doc);
    if (i != 1) return;
    for (auto& r : doc["results"])
      if (r["case_id"] == first["case_id"]) fail(r);
  });
  const auto c2 = compare_digests(std::move(both), {});
  CHECK_FALSE(verdict_reasons_contain(c2.verdict.reasons, "stands out: "));
}

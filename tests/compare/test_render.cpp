#include <catch2/catch.hpp>

#include "compare/render_compare.h"
#include "compare/render_tables.h"
#include "fixtures.h"
#include "tests/support/unwrap.h"

using namespace cudadiag;
using namespace cudadiag::compare;
using compare_test::load_fixtures;
using cudadiag::report::json;

namespace {

cudadiag::report::Report compare_files(const std::vector<std::string>& names) {
  auto reports = load_fixtures(names);
  const CompareOptions options;
  const auto c = compare_reports(reports, options);
  return comparison_report(c, options, {"cudadiag", "compare"});
}

}  // namespace

TEST_CASE("render: the compare report carries the comparison and the verdict", "[compare][render]") {
  const auto r = compare_files({"driver_good.json", "driver_bad.json"});
  CHECK(r.invocation.command == "compare");
  CHECK(r.results.empty());
  CHECK(r.verdict.status == report::VerdictStatus::host_specific);
  REQUIRE(r.extra.fields_of("comparison"));
  const auto cmp = cudadiag::report::to_json(*r.extra.find("comparison"));
  for (const char* key : {"reports", "environment_diff", "outcome_diff", "unpaired", "rate_tests",
                          "suspects", "notes", "weaknesses"})
    CHECK(cmp.contains(key));
  CHECK_FALSE(cmp.contains("baseline"));
  CHECK(cmp["reports"][1]["host"] == "h100-bad");
  CHECK(cmp["reports"][1]["driver"] == "575.57.08");
  CHECK(cmp["reports"][1]["gpu"] == "NVIDIA H100 80GB HBM3");
  CHECK(cmp["outcome_diff"].size() == 1);
  CHECK(cmp["outcome_diff"][0]["failing"] == json::array({"h100-bad"}));
  CHECK(cmp["outcome_diff"][0]["hosts"]["h100-bad"]["error_code"] == 1);
  CHECK(cmp["suspects"][0]["field"] == "driver version");
}

TEST_CASE("render: markdown has the summary, environment, outcome and suspect tables", "[compare][render]") {
  const auto md = render_compare_md(compare_files({"driver_good.json", "driver_bad.json"}));
  CHECK_THAT(md, Catch::StartsWith("## cudadiag compare: `host_specific`"));
  CHECK_THAT(md, Catch::Contains("Most likely suspect: driver version."));
  CHECK_THAT(md, Catch::Contains("| field | h100-good | h100-bad |"));
  CHECK_THAT(md, Catch::Contains("| driver version ≠ | 580.65.06 | 575.57.08 |"));
  CHECK_THAT(md, Catch::Contains("| CUDA driver API | 13.0 | 13.0 |"));
  CHECK_THAT(md, Catch::Contains("| tma.ragged_prefill_seqlen1 [default] @gpu0 | ok | cuda_error 1 cudaErrorInvalidValue | host_specific |"));
  CHECK_THAT(md, Catch::Contains("| 1 | driver version | 90 |"));
  CHECK_THAT(md, Catch::Contains("### Notes"));
  CHECK_THAT(md, Catch::Contains("--repeat N"));
  CHECK_THAT(md, !Catch::Contains("3.2x"));  // duration_ms, process start included, is never compared
}

TEST_CASE("render: the rate tests show p-values and say not significant", "[compare][render]") {
  const auto r = compare_files({"flaky_a.json", "flaky_b.json"});
  const auto md = render_compare_md(r);
  CHECK_THAT(md, Catch::Contains("### Failure rates (Fisher's exact test, two-sided)"));
  CHECK_THAT(md, Catch::Contains("| gpu-node-a 3/50 | gpu-node-b 4/50 | 1 | not significant at α = 0.0125 |"));
  const auto text = cudadiag::test::unwrapped(render_compare_text(r));  // values wrap at 80 columns
  CHECK_THAT(text, Catch::StartsWith("cudadiag compare: flaky"));
  CHECK_THAT(text, Catch::Contains("not significant at α = 0.0125"));
  // The text table cuts this cell at 80 columns; Markdown has it whole.
  CHECK_THAT(md, Catch::Contains("cuda_error 700 cudaErrorIllegalAddress (3/50)"));
}

TEST_CASE("render: on a terminal the verdict is bold and coloured, elsewhere plain", "[compare][render]") {
  const auto r = compare_files({"driver_good.json", "driver_bad.json"});  // host_specific: red
  CHECK_THAT(render_compare_text(r, true), Catch::StartsWith("cudadiag compare: \x1b[1m\x1b[31mhost_specific\x1b[0m\n"));
  CHECK_THAT(render_compare_text(r, false), !Catch::Contains("\x1b"));
  const auto same = compare_files({"identical_a.json", "identical_b.json"});  // same: green
  CHECK_THAT(render_compare_text(same, true), Catch::StartsWith("cudadiag compare: \x1b[1m\x1b[32msame\x1b[0m\n"));
}

TEST_CASE("render: identical reports say so briefly", "[compare][render]") {
  const auto r = compare_files({"identical_a.json", "identical_b.json"});
  const auto text = render_compare_text(r);
  CHECK_THAT(text, Catch::StartsWith("cudadiag compare: same\nNo difference that matters between 2 reports (4 paired results)."));
  CHECK_THAT(text, Catch::Contains("Environment"));
  CHECK_THAT(text, Catch::Contains("580.65.06"));
  CHECK_THAT(text, !Catch::Contains("Failing or differing outcomes"));
  const auto md = render_compare_md(r);
  CHECK_THAT(md, Catch::Contains("No recorded difference."));
  CHECK_THAT(md, Catch::Contains("None: every one of the 4 paired results agrees."));
}

TEST_CASE("render: a fleet shows its baseline and the outlier", "[compare][render]") {
  const auto r = compare_files({"fleet_01.json", "fleet_02.json", "fleet_03.json"});
  REQUIRE(r.extra.fields_of("comparison"));
  REQUIRE(r.extra.fields_of("comparison")->contains("baseline"));
  const auto md = render_compare_md(r);
  CHECK_THAT(md, Catch::Contains("### Majority baseline"));
  CHECK_THAT(md, Catch::Contains("| attention.fa_s512_d128 [default] @gpu0 | ok | 2 | fleet-03: cuda_error 700 |"));
  CHECK_THAT(md, Catch::Contains("fleet-03 stands out"));
  CHECK_THAT(md, Catch::Contains("gpu0 ECC errors ≠"));
}

TEST_CASE("render: markdown cells escape pipes and newlines", "[compare][render]") {
  auto reports = load_fixtures({"identical_a.json", "identical_b.json"});
  reports[1].report.environment.set("CUDA_LAUNCH_BLOCKING", "a|b\nc");
  const CompareOptions options;
  const auto c = compare_reports(reports, options);
  const auto md = render_compare_md(comparison_report(c, options, {}));
  CHECK_THAT(md, Catch::Contains("| env CUDA_LAUNCH_BLOCKING ≠ | (unset) | a\\|b<br>c |"));
}

TEST_CASE("render: a compare report survives a JSON round trip", "[compare][render]") {
  const auto r = compare_files({"driver_good.json", "driver_bad.json"});
  const auto back = cudadiag::report::report_from_json(cudadiag::report::to_json(r));
  CHECK(render_compare_md(back) == render_compare_md(r));
  CHECK(render_compare_text(back) == render_compare_text(r));
}

TEST_CASE("render: control characters in a host label keep the text table's columns", "[compare][render]") {
  // A hostile hostname becomes a column header; shown escaped it is wider than as read.
  std::ostringstream out;
  text_table(out, "Hosts", {"field", "node\x01\x02\x03", "node2"},
             {{"driver version", "580", "575"}, {"gpu0 model", "H100", "H200"}});
  const std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("node\\x01\\x02\\x03  node2"));
  CHECK(text.find('\x01') == std::string::npos);
  CHECK_THAT(text, Catch::Contains("driver version  580               575"));
}

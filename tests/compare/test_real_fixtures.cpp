// Reports captured on real GPU hosts (tests/fixtures/compare/device_*.json: an H100 and
// an H200 repro report, written with --redact): every pair must load, pair every result
// and reach a verdict.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include "compare/render_compare.h"
#include "fixtures.h"

using namespace cudadiag::compare;

namespace {

std::vector<std::string> real_reports() {
  std::vector<std::string> files;
  const std::filesystem::path dir = std::filesystem::path(CUDADIAG_SOURCE_DIR) / "tests/fixtures/compare";
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().rfind("device_", 0) == 0 &&
        e.path().extension() == ".json")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("real fixtures: every pair of captured reports compares", "[compare][real]") {
  const auto files = real_reports();
  REQUIRE(files.size() >= 2);
  const auto& statuses = cudadiag::report::statuses_of(cudadiag::report::Command::compare);
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = i + 1; j < files.size(); ++j) {
      INFO(files[i] << " vs " << files[j]);
      std::vector<LoadedReport> reports;
      REQUIRE_NOTHROW(reports.push_back(load_report_file(files[i])));
      REQUIRE_NOTHROW(reports.push_back(load_report_file(files[j])));
      const CompareOptions options;
      const auto c = compare_reports(reports, options);
      // Every result of both reports is in the pairing, paired or listed as unpaired.
      std::size_t slots = 0;
      for (const auto& pc : c.pairing.cases) slots += pc.present();
      CHECK(slots == reports[0].report.results.size() + reports[1].report.results.size());
      CHECK(std::count(statuses.begin(), statuses.end(), c.verdict.status) == 1);
      CHECK_FALSE(c.verdict.reasons.empty());
      const auto r = comparison_report(c, options, {"cudadiag", "compare"});
      CHECK_FALSE(render_compare_md(r).empty());
      CHECK_FALSE(render_compare_text(r).empty());
    }
  }
}

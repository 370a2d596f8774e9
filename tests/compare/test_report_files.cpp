#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "compare/report_files.h"
#include "fixtures.h"
#include "util/errors.h"

using namespace cudadiag::compare;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the build's temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("cudadiag-report-files-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string copy(const std::string& fixture_name, const std::string& as) const {
    fs::copy_file(compare_test::fixture(fixture_name), path / as);
    return (path / as).string();
  }
};

std::vector<std::string> paths_of(const std::vector<ReportPath>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) out.push_back(fs::path(p.path).filename().string());
  return out;
}

}  // namespace

TEST_CASE("report files: directories and patterns expand, sorted, in argument order", "[compare][files]") {
  TempDir dir;
  dir.copy("fleet_02.json", "b.json");
  dir.copy("fleet_01.json", "a.json");
  dir.copy("fleet_03.json", "c.txt");
  fs::create_directories(dir.path / "sub.json");
  const auto single = compare_test::fixture("identical_a.json");
  const auto expanded = expand_report_paths({single, dir.path.string(), (dir.path / "?.json").string()});
  CHECK(paths_of(expanded) == std::vector<std::string>{"identical_a.json", "a.json", "b.json", "a.json", "b.json"});
  CHECK_FALSE(expanded[0].found);
  CHECK(expanded[1].found);
  CHECK(expanded[3].found);
  // A missing file is left for the reader to name.
  CHECK(paths_of(expand_report_paths({"no_such.json"})) == std::vector<std::string>{"no_such.json"});
  CHECK_THROWS_WITH(expand_report_paths({(dir.path / "*.nothing").string()}), Catch::Contains("matches no file"));
  CHECK_THROWS_WITH(expand_report_paths({(dir.path / "sub.json").string()}), Catch::Contains("holds no .json reports"));
}

TEST_CASE("report files: a set loads with several jobs, in order", "[compare][files]") {
  TempDir dir;
  for (int i = 0; i < 9; ++i) dir.copy("identical_a.json", "r" + std::to_string(i) + ".json");
  const auto set = load_report_set(expand_report_paths({dir.path.string()}), 3);
  REQUIRE(set.reports.size() == 9);
  for (int i = 0; i < 9; ++i) CHECK(fs::path(set.reports[i].file).filename() == "r" + std::to_string(i) + ".json");
  CHECK(set.reports[0].results.size() == 4);
  // Every digest shares the tables: the same case id is one string.
  CHECK(set.reports[0].results[0].case_id == set.reports[8].results[0].case_id);
}

TEST_CASE("report files: with strict, the first bad file in order is the one named", "[compare][files]") {
  TempDir dir;
  for (int i = 0; i < 6; ++i) dir.copy("identical_a.json", "r" + std::to_string(i) + ".json");
  fs::remove(dir.path / "r2.json");
  dir.copy("truncated.json", "r2.json");
  fs::remove(dir.path / "r5.json");
  dir.copy("future_major.json", "r5.json");
  for (unsigned jobs : {1u, 2u, 4u}) {
    INFO("jobs " << jobs);
    CHECK_THROWS_WITH(load_report_set(expand_report_paths({dir.path.string()}), jobs, true),
                      Catch::Contains("r2.json: line"));
    // Without strict both are passed over, each with its note, in order.
    const auto set = load_report_set(expand_report_paths({dir.path.string()}), jobs);
    CHECK(set.reports.size() == 4);
    REQUIRE(set.notes.size() == 2);
    CHECK_THAT(set.notes[0], Catch::Contains("r2.json: passed over") && Catch::Contains("line"));
    CHECK_THAT(set.notes[1], Catch::Contains("r5.json: passed over"));
  }
}

TEST_CASE("report files: a compare report in a directory is passed over, named alone it is refused",
          "[compare][files]") {
  TempDir dir;
  dir.copy("identical_a.json", "a.json");
  dir.copy("identical_b.json", "b.json");
  {
    std::ofstream out(dir.path / "compare.json");
    out << R"({"schema_version":"1.0.0","tool":{},"invocation":{"command":"compare"},"host":{},"driver":{},)"
        << R"("devices":[],"results":[],"comparison":{}})";
  }
  const auto set = load_report_set(expand_report_paths({dir.path.string()}), 2);
  CHECK(set.reports.size() == 2);
  REQUIRE(set.notes.size() == 1);
  CHECK_THAT(set.notes[0], Catch::Contains("compare.json: a compare report, passed over"));
  CHECK_THROWS_WITH(load_report_set(expand_report_paths({(dir.path / "compare.json").string()}), 1),
                    Catch::Contains("/invocation/command: a compare report"));
}

TEST_CASE("report files: an unreadable report in a directory is passed over with a note, fatal with strict or named",
          "[compare][files]") {
  TempDir dir;
  dir.copy("identical_a.json", "a.json");
  dir.copy("identical_b.json", "b.json");
  {
    // A node's report cut short (its task killed while a copy was made by hand).
    std::ifstream in(dir.path / "a.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(dir.path / "c.json");
    out << text.substr(0, text.size() / 2);
  }
  const auto paths = expand_report_paths({dir.path.string()});
  REQUIRE(paths.size() == 3);
  const auto set = load_report_set(paths, 2);
  CHECK(set.reports.size() == 2);
  REQUIRE(set.notes.size() == 1);
  CHECK_THAT(set.notes[0], Catch::StartsWith((dir.path / "c.json").string() + ": passed over, not a readable report ("));
  CHECK_THROWS_WITH(load_report_set(paths, 2, /*strict=*/true), Catch::Contains("c.json"));
  // Named on its own, a bad report is always an error.
  CHECK_THROWS_WITH(load_report_set(expand_report_paths({(dir.path / "c.json").string(), (dir.path / "a.json").string()}), 1),
                    Catch::Contains("c.json"));
}

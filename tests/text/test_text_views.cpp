// Every text view is designed at 80 columns: the saved reports rendered by `show`, the
// commands' own text on this machine (no GPU here: that text is a view too), the fault
// site of the core dumps, the catalog and a comparison. Details stay in the JSON.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;
namespace fs = std::filesystem;

namespace {

// COLUMNS for the binaries this test runs, restored after: the views are checked at a
// known width whatever the terminal running the tests says.
struct ColumnsEnv {
  explicit ColumnsEnv(const char* value) {
    if (const char* old = std::getenv("COLUMNS")) saved = old;
    ::setenv("COLUMNS", value, 1);
  }
  ~ColumnsEnv() {
    if (saved.empty()) ::unsetenv("COLUMNS");
    else ::setenv("COLUMNS", saved.c_str(), 1);
  }
  std::string saved;
};

std::string read_report_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> files_in(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_fits(const std::vector<std::string>& args, const Run& r, std::size_t width = 80) {
  std::string cmd;
  for (const auto& a : args) cmd += " " + a;
  INFO("cudadiag" << cmd << " (exit " << r.code << ")\n" << r.err);
  REQUIRE(r.exited);
  CHECK(r.code != 4);
  CHECK(!r.out.empty());
  const auto wide = wide_lines(r.out, width);
  std::string shown;
  for (std::size_t i = 0; i < wide.size() && i < 8; ++i) shown += wide[i] + "\n";
  INFO(wide.size() << " line(s) over " << width << " columns:\n" << shown);
  CHECK(wide.empty());
  // No word cut short to fit: an identifier is shown whole or not at all.
  const auto cut = cut_words(r.out);
  INFO(cut.size() << " word(s) cut: " << (cut.empty() ? "" : cut.front()));
  CHECK(cut.empty());
  // A line that ends in spaces is a label printed with an empty value ("  line:        ").
  std::vector<std::string> empty_fields;
  std::size_t start = 0;
  while (start < r.out.size()) {
    std::size_t nl = r.out.find('\n', start);
    if (nl == std::string::npos) nl = r.out.size();
    if (nl > start && (r.out[nl - 1] == ' ' || r.out[nl - 1] == '\t')) empty_fields.push_back(r.out.substr(start, nl - start));
    start = nl + 1;
  }
  INFO("lines ending in blanks: " << (empty_fields.empty() ? "" : "'" + empty_fields.front() + "'"));
  CHECK(empty_fields.empty());
}

}  // namespace

TEST_CASE("saved reports render within 80 columns", "[text][width]") {
  const ColumnsEnv columns("80");
  TempDir dir;
  std::vector<fs::path> reports = files_in(source_dir() / "tests/fixtures/compare", ".json");
  for (const auto& p : files_in(source_dir() / "tests/report/data/golden", ".json")) reports.push_back(p);
  for (const auto& p : files_in(source_dir() / "tests/run/data/golden", ".json")) reports.push_back(p);
  reports.push_back(source_dir() / "tests/report/data/good_report.json");
  std::size_t shown = 0;
  for (const auto& p : reports) {
    const std::vector<std::string> args{"show", p.string()};
    const Run r = run_binary(args, dir.path);
    if (r.code == 2) continue;  // the fixtures of broken reports
    ++shown;
    check_fits(args, r);
  }
  CHECK(shown >= 20);
}

TEST_CASE("the commands' own text fits 80 columns on a machine without a GPU", "[text][width]") {
  const ColumnsEnv columns("80");
  TempDir dir;
  const fs::path src = source_dir();
  const std::string cmp = (src / "tests/fixtures/compare").string();
  std::vector<std::vector<std::string>> commands = {
      {"run", "--", "/bin/true"},
      {"run", "--rungs", "native", "--", "/bin/false"},
      {"env", "--kernel-log", (src / "tests/run/data/device_h100_kmsg_nvrm.txt").string()},
      {"list"},
      {"list", "--kernel", "tma"},
      {"repro"},
      {"compare", cmp + "/device_h100.json", cmp + "/device_h200.json"},
      {"compare", cmp + "/flaky_a.json", cmp + "/flaky_b.json"},
      {"compare", cmp + "/fleet_01.json", cmp + "/fleet_02.json", cmp + "/fleet_03.json", cmp + "/device_h100.json"},
      {"attention", "--sweep"},
      {"fault", "oob-write"},
      {"index-select"},
      {"tma", "--from-log", (src / "tests/data/tma/flashinfer_seqlen1.log").string(), "--host-only"},
      {"tma", "--host-only", "--dtype", "bf16", "--dims", "64,8", "--strides", "128", "--box", "64,8"},
  };
  for (const auto& dump : files_in(src / "tests/coredump/data", ".nvcudmp"))
    commands.push_back({"coredump", dump.string()});
  commands.push_back({"coredump", "--no-disassemble", (src / "tests/coredump/data/far_write.nvcudmp").string()});
  for (const auto& args : commands) check_fits(args, run_binary(args, dir.path));
}

TEST_CASE("every case id of a saved report appears whole in show's text, at any width", "[text][width]") {
  TempDir dir;
  std::vector<fs::path> reports = files_in(source_dir() / "tests/fixtures/compare", ".json");
  for (const auto& p : files_in(source_dir() / "tests/report/data/golden", ".report.json")) reports.push_back(p);
  std::size_t checked = 0;
  for (const char* width : {"80", "60", "132"}) {
    const ColumnsEnv columns(width);
    for (const auto& p : reports) {
      const auto doc = nlohmann::json::parse(read_report_text(p), nullptr, false);
      if (doc.is_discarded() || !doc.contains("results")) continue;
      const Run r = run_binary({"show", p.string()}, dir.path);
      if (r.code == 2) continue;
      INFO("COLUMNS=" << width << " cudadiag show " << p.filename().string());
      check_fits({"show", p.string()}, r, static_cast<std::size_t>(std::stoul(width)));
      for (const auto& res : doc.at("results")) {
        const std::string id = res.value("case_id", "");
        if (id.empty()) continue;
        INFO(id);
        CHECK(r.out.find(id) != std::string::npos);
        ++checked;
      }
    }
  }
  CHECK(checked >= 60);
}

TEST_CASE("text follows COLUMNS: wider lines when it is wide, within it when narrow", "[text][width]") {
  TempDir dir;
  const std::vector<std::string> args{"run", "--rungs", "native", "--", "/bin/false"};
  std::size_t widest_at_160 = 0;
  {
    const ColumnsEnv columns("160");
    const Run r = run_binary(args, dir.path);
    check_fits(args, r, 160);
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      widest_at_160 = std::max(widest_at_160, cudadiag::text::display_width(line));
  }
  CHECK(widest_at_160 > 80);
  const ColumnsEnv columns("50");
  check_fits(args, run_binary(args, dir.path), 50);
}

// Reports read back and written again, in every format, byte for byte as recorded in
// tests/report/data/golden: the report model may change its types, never what a user
// reads. Each input under tests/report/data/golden/*.report.json (and the compare
// fixtures listed below) has its recorded outputs beside it:
//   <stem>.out.json   report_from_json -> to_json (2-space indent)
//   <stem>.out.txt    render text (no colour)
//   <stem>.out.md     render md
//   <stem>.redacted.json  the same after redact()
// CUDADIAG_UPDATE_GOLDEN=1 rewrites them (only when a change of output is intended).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "report/json_document.h"
#include "report/redact.h"
#include "report/render.h"
#include "redaction_keys.h"
#include "sample_report.h"
#include "tests/support/golden.h"

using namespace cudadiag;
namespace fs = std::filesystem;

namespace {

using test::check_golden;

void check_outputs(const report::Report& r, const fs::path& dir, const std::string& stem) {
  check_golden(dir / (stem + ".out.json"), report::dump_json(report::to_json(r), 2) + "\n");
  check_golden(dir / (stem + ".out.txt"), report::render(r, report::Format::text, false));
  check_golden(dir / (stem + ".out.md"), report::render(r, report::Format::md));
  report::Report redacted = r;
  report::RedactionInputs secrets{{{"TOKEN", "s3cret-value"}}};
  secrets.tokens = test::test_tokens();
  report::redact(redacted, secrets);
  check_golden(dir / (stem + ".redacted.json"), report::dump_json(report::to_json(redacted), 2) + "\n");
}

const fs::path kData = fs::path(CUDADIAG_SOURCE_DIR) / "tests/report/data";
const fs::path kGolden = kData / "golden";

}  // namespace

TEST_CASE("golden: recorded reports read, write and render as recorded", "[golden]") {
  std::vector<fs::path> inputs;
  for (const auto& e : fs::directory_iterator(kGolden))
    if (e.path().string().size() > 12 && e.path().string().ends_with(".report.json")) inputs.push_back(e.path());
  for (const char* f : {"device_h100.json", "device_h200_s11.json", "flaky_a.json", "suite_default.json",
                        "suite_scenario.json", "fleet_01.json", "newer_minor.json", "driver_bad.json",
                        "inconsistent_repeats.json"})
    inputs.push_back(fs::path(CUDADIAG_SOURCE_DIR) / "tests/fixtures/compare" / f);
  inputs.push_back(kData / "good_report.json");
  std::sort(inputs.begin(), inputs.end());
  REQUIRE(inputs.size() >= 12);
  for (const auto& in : inputs) {
    std::string stem = in.filename().string();
    stem = stem.substr(0, stem.find('.'));
    if (in.parent_path().filename() == "compare") stem = "fixture_" + stem;
    SECTION(stem) {
      const auto doc = report::load_json_document(in.string());
      check_outputs(report::report_from_json(doc, in.string()), kGolden, stem);
    }
  }
}

TEST_CASE("golden: the sample report writes and renders as recorded", "[golden]") {
  // Its tool and invocation come from the build and the clock: read back from a fixed
  // document instead.
  report::json doc = report::to_json(test::sample_report());
  doc["tool"] = report::json{{"name", "cudadiag"}, {"version", "0.0.0"}, {"git_revision", "0000000"}};
  doc["invocation"] = report::json{{"command", "repro"},
                                   {"argv", {"cudadiag", "repro"}},
                                   {"started_at", "2026-01-31T12:00:00.000Z"},
                                   {"finished_at", "2026-01-31T12:00:01.000Z"},
                                   {"duration_ms", 1000}};
  check_outputs(report::report_from_json(doc, "sample"), kGolden, "sample");
}

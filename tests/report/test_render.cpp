// Text and Markdown renderings of a report: rows, columns, detail blocks, colour rules.
#include <catch2/catch.hpp>

#include <algorithm>

#include <sstream>

#include "report/render.h"
#include "sample_report.h"
#include "tests/support/unwrap.h"
#include "util/errors.h"
#include "util/text_layout.h"

using namespace cudadiag;
using report::Format;
using report::json;
using report::render;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

// The first line that starts with `prefix`, or "" when none does.
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& l : lines_of(text)) {
    if (l.rfind(prefix, 0) == 0) return l;
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("text: header names the command, verdict, host, GPU and driver", "[render]") {
  const auto text = render(test::sample_report(), Format::text, false);
  CHECK(lines_of(text).at(0) == "cudadiag repro: suspect");
  CHECK(contains(line_starting(text, "  host"), "gpu-node-17.example.com (Ubuntu 24.04, kernel 6.8.0)"));
  CHECK(contains(line_starting(text, "  gpu"), "[0] NVIDIA H100 80GB HBM3 (sm 9.0)"));
  CHECK(contains(line_starting(text, "  driver"), "580.65.06, CUDA 13.0"));
}

namespace {

// The width for one test, 80 again after it.
struct RenderWidth {
  explicit RenderWidth(std::size_t w) { text::set_columns(w); }
  ~RenderWidth() { text::set_columns(text::kColumns); }
};

}  // namespace

TEST_CASE("text: one aligned table row per result where the line is wide enough", "[render]") {
  const RenderWidth width(132);
  const auto rep = test::sample_report();
  const auto text = render(rep, Format::text, false);
  const auto lines = lines_of(text);
  const auto head_at = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("CASE", 0) == 0; });
  REQUIRE(head_at != lines.end());
  const std::string head = *head_at;
  const size_t outcome_col = head.find("OUTCOME");
  const size_t met_col = head.find("MET");
  REQUIRE(outcome_col < met_col);
  CHECK(head.size() <= 132);
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const auto& res = rep.results[i];
    const std::string row = *(head_at + 1 + static_cast<std::ptrdiff_t>(i));
    INFO(row);
    CHECK(row.substr(0, row.find(' ')) == res.case_id);  // whole, never cut
    const std::string outcome(report::to_string(res.outcome));
    CHECK(row.substr(outcome_col, outcome.size() + 1) == outcome + " ");
    CHECK(row.size() == head.size());  // the right-aligned duration ends every row at the same column
  }
  const std::string fault = *(head_at + 3);
  CHECK(contains(fault, " fence "));
  CHECK(fault.substr(met_col, 4) == "FAIL");
  CHECK(contains(fault, "12.5 ms"));
  CHECK((head_at + 1)->substr(met_col, 3) == "ok ");
  CHECK(line_starting(text, "sample.skipped ").substr(met_col, 2) == "- ");
}

TEST_CASE("text: a table too wide for the line becomes a list; no case id is cut", "[render]") {
  const auto rep = test::sample_report();
  const auto text = render(rep, Format::text, false);  // 80 columns: too narrow for this table
  INFO(text);
  CHECK(line_starting(text, "CASE").empty());
  const auto lines = lines_of(text);
  for (const auto& res : rep.results) {
    INFO(res.case_id);
    // The id whole at the start of its line, the other cells after it or under it.
    const auto at = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l == res.case_id || l.rfind(res.case_id + "  ", 0) == 0;
    });
    REQUIRE(at != lines.end());
    std::string item = *at;
    for (auto next = at + 1; next != lines.end() && next->rfind("    ", 0) == 0; ++next) item += "\n" + *next;
    CHECK(contains(item, "  " + res.profile));
    CHECK(contains(item, "12.5 ms"));
  }
  CHECK(contains(text, "\nfault.overrun_read\n    fence, fence-back, cuda_error, expected error:memory_fault (NOT met),"));
  CHECK(contains(text, "\nsample.ok  default, pool, ok, expected ok (met), 12.5 ms\n"));
  for (const auto& l : lines) CHECK(l.size() <= 80);
  // The detail blocks say each error.
  CHECK(contains(text, "700 cudaErrorIllegalAddress (memory_fault, sticky,"));
}

TEST_CASE("text: a table that fits keeps the error column and the error's class", "[render]") {
  auto rep = test::sample_report();
  rep.results.resize(3);  // ok, mismatch, the fault: narrow enough without expectations
  const char* ids[] = {"a", "b", "c"};
  for (size_t i = 0; i < 3; ++i) {
    rep.results[i].case_id = ids[i];
    rep.results[i].expected = "";
    rep.results[i].expectation_met.reset();
    rep.results[i].allocator.reset();
  }
  const auto text = render(rep, Format::text, false);
  const std::string head = line_starting(text, "CASE");
  INFO(text);
  REQUIRE(contains(head, "ERROR"));
  CHECK_FALSE(contains(head, "EXPECTED"));  // no row has one: the column says nothing
  CHECK_FALSE(contains(head, "ALLOCATOR"));
  const std::string fault = line_starting(text, "c ");
  CHECK(fault.substr(head.find("ERROR")).rfind("cudaErrorIllegalAddress (memory_fault)", 0) == 0);
  for (const auto& l : lines_of(text)) CHECK(l.size() <= 80);
}

TEST_CASE("text: detail blocks only for results that need a look", "[render]") {
  const auto text = render(test::sample_report(), Format::text, false);
  const auto details = test::unwrapped(text.substr(text.find("\nDetails\n")));
  CHECK(contains(details, "fault.overrun_read [fence, fence-back]: cuda_error, expected error:memory_fault"));
  CHECK(contains(details, "700 cudaErrorIllegalAddress (memory_fault, sticky, runtime)"));
  CHECK(contains(details, "synchronize in cudaDeviceSynchronize at kernels/faults/overrun.cu:42"));
  CHECK(contains(details, "next step"));
  CHECK(contains(details, "Re-run under the fence profile to find the buffer."));
  CHECK(contains(details, "overrun_read_kernel grid(16,1,1) block(256,1,1) buffers src, dst"));
  CHECK(contains(details, "src (4096 bytes): end_overrun, confirmed by 3 extra run(s)"));
  CHECK(contains(details, "4/10 failed (40%, 95% CI 17-69%), 40 runs/s in the child (0.250 s)"));
  CHECK(contains(text, "    | line five\n"));
  CHECK_FALSE(contains(details, "line six"));
  CHECK(contains(details, "... (1 more line(s))"));
  CHECK(contains(details, "Xid 13 (pid 4242): Graphics SM Warp Exception"));
  CHECK(contains(details, "[points to application]"));
  CHECK(contains(details, "pid 4243 ended: signal SIGABRT (6)"));
  CHECK(contains(details, "Assertion `idx < n` failed."));
  // Met and skipped results get no block.
  CHECK_FALSE(contains(details, "sample.ok ["));
  CHECK_FALSE(contains(details, "sample.skipped ["));
}

TEST_CASE("text: an expected failure gets no detail block; an unjudged one does", "[render]") {
  auto rep = test::sample_report();
  rep.results[2].expectation_met = true;
  auto text = render(rep, Format::text, false);
  CHECK_FALSE(contains(text, "fault.overrun_read [fence"));
  rep.results[2].expectation_met.reset();
  text = render(rep, Format::text, false);
  CHECK(contains(text, "fault.overrun_read [fence"));
}

TEST_CASE("text: summary, verdict reasons and extra sections", "[render]") {
  auto rep = test::sample_report();
  rep.extra.set("comparison", report::value_from_json(json{{"verdict", "host_specific"}, {"hosts", {"a", "b"}}, {"diff", {{"env", 2}}}}));
  // Without -v the section is the JSON's: named, not shown.
  const auto brief = render(rep, Format::text, false);
  CHECK_FALSE(contains(brief, "\nComparison\n"));
  CHECK(contains(line_starting(brief, "  more"), "-v, or the JSON report (comparison)"));
  const auto text = render(rep, Format::text, false, true);
  CHECK(contains(text, "\nComparison\n"));
  CHECK(contains(line_starting(text, "  verdict"), "host_specific"));
  CHECK(contains(line_starting(text, "  hosts"), "a, b"));
  CHECK(contains(line_starting(text, "  diff.env"), "2"));
  CHECK(contains(line_starting(text, "  results"), "11 (ok 1, mismatch 1, cuda_error 1"));
  CHECK(contains(line_starting(text, "  expectations"), "1 met, 9 unmet, 1 not judged"));
  CHECK(contains(text, "\nVerdict: suspect\n  - fault.overrun_read: expected error:memory_fault, got cuda_error\n"));
}

TEST_CASE("text: a GPU part that did not run is said in the header", "[render]") {
  auto rep = report::new_report({"cudadiag", "env"}, "env");
  rep.gpu = {false, "cudaErrorInsufficientDriver"};
  rep.verdict.status = report::VerdictStatus::no_gpu;
  const auto text = render(rep, Format::text, false);
  CHECK(contains(line_starting(text, "  gpu part"), "did not run: cudaErrorInsufficientDriver"));
  CHECK(line_starting(text, "CASE").empty());
  CHECK(contains(line_starting(text, "  results"), "0"));
}

TEST_CASE("text: no ANSI escapes without colour; colour and check marks with it", "[render]") {
  const RenderWidth width(132);  // the table, with its MET column
  const auto plain = render(test::sample_report(), Format::text, false);
  CHECK_FALSE(contains(plain, "\033"));
  CHECK_FALSE(contains(plain, "✓"));
  const auto coloured = render(test::sample_report(), Format::text, true);
  CHECK(contains(coloured, "\033[32m✓"));  // met: green
  CHECK(contains(coloured, "\033[31m✗"));  // unmet: red
  CHECK(contains(coloured, "\033[33m-"));  // not judged: yellow
}

TEST_CASE("md: heading, pipe table and details for a bug report", "[render]") {
  auto rep = test::sample_report();
  rep.results[2].expected = "error:memory_fault|error:700";
  const auto md = render(rep, Format::md, false);
  CHECK(lines_of(md).at(0) == "## cudadiag repro: **suspect**");
  CHECK(contains(md, "- **GPU:** [0] NVIDIA H100 80GB HBM3 (sm 9.0)"));
  CHECK(contains(md, "\n| Case | Profile | Allocator | Outcome | Expected | Met | Error | Duration |\n"
                     "|---|---|---|---|---|:---:|---|---:|\n"));
  CHECK(contains(md, "| `fault.overrun_read` | fence | fence-back | cuda_error | "
                     "`error:memory_fault\\|error:700` | ✗ | cudaErrorIllegalAddress (memory_fault) | 12.5 ms |"));
  CHECK(contains(md, "| `sample.ok` | default | pool | ok | `ok` | ✓ |"));
  CHECK(contains(md, "#### fault.overrun_read [fence, fence-back]"));
  CHECK(contains(md, "- **Next step:** Re-run under the fence profile to find the buffer."));
  CHECK(contains(md, "- **Kernel log:** Xid 13 (pid 4242)"));
  CHECK(contains(md, "```text\nline one of stderr\nline two\n"));
  CHECK(contains(md, "### Verdict: suspect\n\n- fault.overrun_read"));
  CHECK_FALSE(contains(md, "\033"));
  // Every table row has the same number of unescaped cell separators as the header.
  for (const auto& l : lines_of(md)) {
    if (l.rfind("| `", 0) != 0) continue;
    size_t pipes = 0;
    for (size_t i = 0; i < l.size(); ++i) pipes += l[i] == '|' && (i == 0 || l[i - 1] != '\\');
    INFO(l);
    CHECK(pipes == 9);
  }
}

TEST_CASE("md: a stderr excerpt with backtick fences cannot close the code block", "[render]") {
  auto rep = test::sample_report();
  rep.results[2].child->stderr_excerpt.text = "before\n```\nafter\n";
  const auto md = render(rep, Format::md, false);
  CHECK(contains(md, "````text\nbefore\n```\nafter\n````\n"));
}

TEST_CASE("md: extra sections as bullet lists", "[render]") {
  auto rep = test::sample_report();
  rep.extra.set("sweep", report::value_from_json(json{{"points", 12}, {"failing", json::array({json{{"s", 1}}, json{{"s", 2}}})}}));
  const auto md = render(rep, Format::md, false, true);
  CHECK(contains(md, "### Sweep\n\n- **Points:** 12\n- **Failing:** 2 entries (in the JSON report)\n"));
  CHECK_FALSE(contains(render(rep, Format::md, false), "### Sweep"));  // -v only
}

TEST_CASE("json: the report document, indented", "[render]") {
  const auto rep = test::sample_report();
  CHECK(render(rep, Format::json, true) == report::to_json(rep).dump(2) + "\n");
}

TEST_CASE("parse_format accepts text, json, md and rejects the rest", "[render]") {
  CHECK(report::parse_format("text") == Format::text);
  CHECK(report::parse_format("json") == Format::json);
  CHECK(report::parse_format("md") == Format::md);
  CHECK_THROWS_AS(report::parse_format("yaml"), UsageError);
  CHECK_THROWS_WITH(report::parse_format("yaml"), Catch::Contains("yaml"));
}

TEST_CASE("text: header facts from the env command's host, driver and device shapes", "[render]") {
  auto rep = report::new_report({"cudadiag", "env"}, "env");
  rep.host = report::host_info_from_json(
      json{{"hostname", nullptr},
           {"os", "Debian GNU/Linux 12"},
           {"kernel", {{"release", "6.1.0-18-amd64"}, {"version", "#1 SMP"}, {"machine", "x86_64"}}}});
  rep.driver = report::driver_info_from_json(json{{"version", "580.82.07"}, {"cuda_driver_version_string", "13.0"}});
  rep.devices = report::devices_from_json(
      json::array({json{{"index", 0},
                        {"name", "NVIDIA H200"},
                        {"visible_to_cuda", true},
                        {"cuda", {{"compute_capability", "9.0"}}}},
                   json{{"name", "NVIDIA H200"}, {"visible_to_cuda", false}, {"cuda", nullptr}}}));
  rep.gpu = {true, std::nullopt};
  rep.verdict.status = report::VerdictStatus::ok;
  const auto text = render(rep, Format::text, false);
  CHECK(contains(line_starting(text, "  host"), "Debian GNU/Linux 12, kernel 6.1.0-18-amd64"));
  CHECK(contains(text, "  gpu      [0] NVIDIA H200 (sm 9.0)\n  gpu      NVIDIA H200\n"));
  CHECK(contains(line_starting(text, "  driver"), "580.82.07, CUDA 13.0"));
}

TEST_CASE("text: each reason once; a result's details behind -v", "[render]") {
  auto rep = report::new_report({"cudadiag", "env"}, "env");
  rep.gpu = {false, "libcuda.so.1 not found: no NVIDIA driver"};
  rep.verdict.status = report::VerdictStatus::no_driver;
  rep.verdict.reasons = {"libcuda.so.1 not found: no NVIDIA driver", "libcuda.so.1 not found: no NVIDIA driver",
                         "the GPU part could not run: libcuda.so.1 not found: no NVIDIA driver"};
  const auto text = render(rep, Format::text, false);
  INFO(text);
  std::size_t said = 0;
  for (std::size_t at = 0; (at = text.find("libcuda.so.1 not found", at)) != std::string::npos; ++at) ++said;
  CHECK(said == 1);  // the longest reason holds the others; the header points at the verdict
  CHECK(contains(line_starting(text, "  gpu part"), "did not run (the verdict says why)"));
  CHECK(contains(line_starting(text, "  command"), "cudadiag env"));
  CHECK(line_starting(text, "  expectations").empty());  // nothing had one

  auto sample = test::sample_report();
  const auto brief = render(sample, Format::text, false);
  CHECK_FALSE(contains(brief, "detail first_bad_index"));
  CHECK(contains(render(sample, Format::text, false, true), "detail first_bad_index"));
}

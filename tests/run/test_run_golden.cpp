// `run`'s results as the report writes and renders them, byte for byte as recorded in
// tests/run/data/golden: the report model may change its types, never what a user
// reads. CUDADIAG_UPDATE_GOLDEN=1 rewrites the recorded files (only for an intended
// change of output).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/render.h"
#include "run/to_result.h"
#include "run_fixtures.h"
#include "tests/support/golden.h"

using namespace cudadiag;
using namespace cudadiag::run;
using namespace cudadiag::run::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(CUDADIAG_SOURCE_DIR) / "tests/run/data/golden";

using test::check_golden;

// A report around the results with fixed session members (no clock, no host).
report::Report fixed_report(std::vector<report::Result> results) {
  report::Report rep;
  rep.tool = report::Tool{"cudadiag", "0.0.0", "", "", {}};
  rep.invocation.command = "run";
  rep.invocation.argv = {"cudadiag", "run", "--", "python3", "train.py"};
  rep.invocation.started_at = "2026-01-31T12:00:00.000Z";
  rep.gpu = report::GpuStatus{true, std::nullopt};
  rep.results = std::move(results);
  rep.verdict.status = report::VerdictStatus::exposed;
  rep.verdict.reasons = {"recorded"};
  report::finish_report(rep);
  rep.invocation.finished_at = "2026-01-31T12:00:01.000Z";
  return rep;
}

}  // namespace

TEST_CASE("golden: run's results write and render as recorded", "[golden]") {
  std::vector<report::Result> results;
  {
    auto o = exited(Rung::fence, 1, kIllegalAddress);
    o.repeat_index = 2;
    o.interposer = fenced_log();
    o.xid.push_back(xid31(0x7f0000200000));
    results.push_back(to_result(o, judge_run(o)));
  }
  for (auto o : {exited(Rung::native, 0), exited(Rung::native, 3), killed(Rung::native, 11, "SIGSEGV"),
                 exited(Rung::native, 127, "sh: 1: x: not found\n")})
    results.push_back(to_result(o, judge_run(o)));
  {
    auto o = exited(Rung::sanitizer, 1, kIllegalAddress);
    sanitizer::MemcheckReport m;
    m.findings.push_back(memcheck_access("Invalid __global__ write of size 4 bytes", "index_select_kernel"));
    m.findings.back().thread = std::array<long long, 3>{1, 0, 0};
    m.findings.back().nearest = sanitizer::NearestAllocation{4, "after", "0x7f5190800000", 4000, ""};
    sanitizer::ApiError api{"cudaDeviceSynchronize", 719, "cudaErrorLaunchFailure", "unspecified launch failure"};
    sanitizer::Finding f;
    f.record_kind = "Api";
    f.level = "Error";
    f.message = "Program hit cudaErrorLaunchFailure";
    f.api = api;
    f.host_frames.push_back(sanitizer::Frame{"main", "train.cu", 12, "train", "0x10"});
    m.findings.push_back(f);
    o.sanitizer = m;
    results.push_back(to_result(o, judge_run(o)));
  }
  {
    std::string junk = "CUDA error: an illegal memory access was encountered \xC0\xFF\n";
    for (int i = 0; i < 300; ++i) junk += static_cast<char>((i * 131) & 0xFF);
    auto o = exited(Rung::native, 1, junk, junk);
    o.command = {"python3", "tr\xFF" "ain.py"};
    o.xid.push_back(*cudadiag::host::parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, bad \xFE\xFF text"));
    results.push_back(to_result(o, judge_run(o)));
  }
  for (auto& r : results) r.duration_ms = 12.5;  // the fixtures' wall time is not recorded
  const auto rep = fixed_report(std::move(results));
  check_golden(kGolden / "run.out.json", report::dump_json(report::to_json(rep), 2) + "\n");
  check_golden(kGolden / "run.out.txt", report::render(rep, report::Format::text, false));
  check_golden(kGolden / "run.out.md", report::render(rep, report::Format::md));
  // Read back: the same document again.
  const auto back = report::report_from_json(report::to_json(rep), "run golden");
  CHECK(report::dump_json(report::to_json(back), 2) + "\n" == report::dump_json(report::to_json(rep), 2) + "\n");
}

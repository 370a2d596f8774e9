#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "run/run_verdict.h"
#include "run_fixtures.h"

using namespace cudadiag::run;
using namespace cudadiag::run::testing;

namespace {

RunJudgement judged(RunObservation o, int repeat = 0) {
  o.repeat_index = repeat;
  return judge_run(o);
}

RunObservation fence_clean() {
  auto o = exited(Rung::fence, 0);
  o.interposer = fenced_log();
  return o;
}

RunObservation fence_fault() {
  auto o = exited(Rung::fence, 1, kIllegalAddress);
  o.interposer = fenced_log();
  o.xid.push_back(xid31(0x7f0000201000));
  return o;
}

bool has_note(const RunVerdict& v, const std::string& part) {
  for (const auto& n : v.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("clean: every run clean and the fence effective") {
  const std::vector<RunJudgement> runs{judged(exited(Rung::native, 0)), judged(exited(Rung::blocking, 0)),
                                       judged(fence_clean())};
  const auto v = decide_run_verdict(runs, {{Rung::sanitizer, "--sanitize auto: nothing failed"}});
  CHECK(v.kind == VerdictKind::clean);
  CHECK(exit_code_of(v) == 0);
  CHECK(v.reason == "all 3 runs clean; the fence was effective in every fenced run");
  CHECK(v.rungs.size() == 3);
  CHECK(has_note(v, "sanitizer did not run: --sanitize auto"));
}

TEST_CASE("clean: memcheck saw the program end before its first CUDA call, and no fence ran") {
  // A GPU machine without the interposer: /bin/true under compute-sanitizer.
  const auto memcheck = exited(Rung::sanitizer, 255, "",
                               "========= Error: Target application terminated before first instrumented API call\n");
  const std::vector<RunJudgement> runs{judged(exited(Rung::native, 0)), judged(exited(Rung::blocking, 0)),
                                       judged(memcheck)};
  const auto v = decide_run_verdict(runs, {{Rung::fence, "the fence interposer was not found"}});
  CHECK(v.kind == VerdictKind::clean);
  CHECK(exit_code_of(v) == 0);
  CHECK(v.reason ==
        "all 3 runs clean; the program never used CUDA (memcheck saw it end before its first CUDA call): nothing to "
        "check");
  CHECK(v.coverage.seen.empty());
  CHECK(v.coverage.unseen.empty());
  // Where a fenced run used CUDA, memcheck's word does not make the program one that never did.
  const std::vector<RunJudgement> with_fence{judged(exited(Rung::native, 0)), judged(fence_clean()), judged(memcheck)};
  CHECK(decide_run_verdict(with_fence, {}).reason == "all 3 runs clean; the fence was effective in every fenced run");
}

TEST_CASE("nothing failed, but nothing could see: inconclusive, never clean") {
  auto fence = exited(Rung::fence, 0);
  fence.interposer = pool_log();  // pool: not effective
  auto v = decide_run_verdict({judged(exited(Rung::native, 0)), judged(fence)}, {});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(exit_code_of(v) == 1);
  CHECK(v.reason.find("nothing could have seen a silent overrun: the fence was not effective") != std::string::npos);
  CHECK(has_note(v, "--sanitize always"));

  // The fence was not asked for.
  v = decide_run_verdict({judged(exited(Rung::native, 0))}, {});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(v.reason.find("the fence rung was not asked for") != std::string::npos);

  // The interposer was missing: the skip reason says so.
  v = decide_run_verdict({judged(exited(Rung::native, 0))}, {{Rung::fence, "the fence interposer was not found"}});
  CHECK(v.reason.find("the fence did not run: the fence interposer was not found") != std::string::npos);

  // ...but memcheck running clean is enough.
  auto san = exited(Rung::sanitizer, 0);
  san.sanitizer = cudadiag::sanitizer::MemcheckReport{};
  v = decide_run_verdict({judged(exited(Rung::native, 0)), judged(san)}, {{Rung::fence, "not found"}});
  CHECK(v.kind == VerdictKind::clean);
  CHECK(v.reason.find("memcheck found nothing") != std::string::npos);
}

TEST_CASE("exposed by the fence: the rung, the allocation, the direction, the bytes") {
  const std::vector<RunJudgement> runs{judged(exited(Rung::native, 0)), judged(exited(Rung::blocking, 0)),
                                       judged(fence_fault())};
  const auto v = decide_run_verdict(runs, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(exit_code_of(v) == 1);
  REQUIRE(v.first_exposed_by);
  CHECK(*v.first_exposed_by == Rung::fence);
  CHECK(v.evidence_run == 2u);
  INFO(v.evidence);
  CHECK(v.evidence.find("fence: a write fault: the fault at 0x7f0000201000 (page) is between 4096 and 8191 bytes "
                        "past the end of allocation #7 (4000 bytes") != std::string::npos);
  CHECK(v.evidence.find("kernel index_select_kernel (launch #30) was passed this allocation") != std::string::npos);
  CHECK(v.reason.rfind("exposed by the fence rung (1/1 runs): fence: a write fault", 0) == 0);
  CHECK(has_note(v, "fence: 1/1 failed (100%, 95% CI 21-100%)"));
}

TEST_CASE("exposed natively; the most precise evidence is the fence's") {
  const std::vector<RunJudgement> runs{judged(exited(Rung::native, 1, kIllegalAddress)),
                                       judged(exited(Rung::blocking, 1, kIllegalAddress)), judged(fence_fault())};
  const auto v = decide_run_verdict(runs, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(*v.first_exposed_by == Rung::native);
  CHECK(v.evidence_run == 2u);
  CHECK(v.reason.rfind("exposed by the native rung (1/1 runs): fence:", 0) == 0);
}

TEST_CASE("evidence order: memcheck's finding over a device assert over the error text") {
  auto san = exited(Rung::sanitizer, 1);
  cudadiag::sanitizer::MemcheckReport r;
  auto f = memcheck_access("Invalid __global__ read of size 2 bytes", "indexSelectLargeIndex");
  f.file = "Indexing.cu";
  f.line = 1146;
  f.thread = std::array<long long, 3>{5, 0, 0};
  f.block = std::array<long long, 3>{1, 0, 0};
  cudadiag::sanitizer::NearestAllocation n;
  n.distance_bytes = 64;
  n.relation = "after";
  n.size = 4096;
  f.nearest = n;
  r.findings.push_back(f);
  san.sanitizer = r;
  const std::string assert_line =
      "../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [336,0,0], thread: [0,0,0] "
      "Assertion `srcIndex < srcSelectDimSize` failed.\n";
  auto v = decide_run_verdict({judged(exited(Rung::native, 1, assert_line + kIllegalAddress)), judged(san)}, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(v.evidence ==
        "sanitizer: memcheck: Invalid __global__ read of size 2 bytes in indexSelectLargeIndex at Indexing.cu:1146, "
        "thread (5,0,0) block (1,0,0), 64 bytes after the nearest allocation (4096 bytes)");

  v = decide_run_verdict({judged(exited(Rung::native, 1, std::string(kIllegalAddress) + assert_line))}, {});
  CHECK(v.evidence ==
        "native: device assert `srcIndex < srcSelectDimSize` failed at ../aten/src/ATen/native/cuda/Indexing.cu:1146 "
        "in indexSelectLargeIndex, block (336,0,0) thread (0,0,0)");

  v = decide_run_verdict({judged(exited(Rung::native, 1, kIllegalAddress))}, {});
  CHECK(v.evidence == "native: cudaErrorIllegalAddress: torch.AcceleratorError: CUDA error: an illegal memory access was "
                      "encountered");
}

TEST_CASE("flaky: the same rung sometimes fails, with Wilson intervals") {
  std::vector<RunJudgement> runs;
  for (int i = 0; i < 10; ++i)
    runs.push_back(judged(i % 3 == 0 ? exited(Rung::native, 1, kIllegalAddress) : exited(Rung::native, 0), i));
  const auto v = decide_run_verdict(runs, {});
  CHECK(v.kind == VerdictKind::flaky);
  CHECK(exit_code_of(v) == 1);
  REQUIRE(v.rungs.size() == 1);
  CHECK(v.rungs[0].runs == 10);
  CHECK(v.rungs[0].failures == 4);
  CHECK(v.rungs[0].ci.low == Approx(0.168).margin(0.01));
  CHECK(v.rungs[0].ci.high == Approx(0.687).margin(0.01));
  CHECK(v.rungs[0].outcomes.at("cuda_error") == 4);
  CHECK(v.rungs[0].outcomes.at("clean") == 6);
  CHECK(v.reason.rfind("flaky: native: 4/10 failed (40%, 95% CI 17-69%)", 0) == 0);
}

TEST_CASE("flaky natively but exposed every time under the fence: exposed") {
  std::vector<RunJudgement> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(judged(i == 0 ? exited(Rung::native, 1, kIllegalAddress) : exited(Rung::native, 0), i));
  for (int i = 0; i < 4; ++i) runs.push_back(judged(fence_fault(), i));
  const auto v = decide_run_verdict(runs, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(*v.first_exposed_by == Rung::native);
  CHECK(v.reason.rfind("exposed by the native rung (1/4 runs; every run under fence)", 0) == 0);
}

TEST_CASE("faults only under the fence that the fence may have caused: inconclusive") {
  auto tma = fence_fault();
  tma.interposer->summary.tma_encodes = 4;
  tma.interposer->summary.tma_near_guard = 2;
  const auto v = decide_run_verdict({judged(exited(Rung::native, 0)), judged(tma)}, {});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(v.reason.find("faults only under the fence, and the program encoded 4 TMA descriptor(s)") != std::string::npos);
  // With a native fault as well, the suspicion no longer matters.
  const auto v2 = decide_run_verdict({judged(exited(Rung::native, 1, kIllegalAddress)), judged(tma)}, {});
  CHECK(v2.kind == VerdictKind::exposed);
}

TEST_CASE("failures without any CUDA error: the program's own, or flaky") {
  auto v = decide_run_verdict({judged(exited(Rung::native, 2, "ValueError\n")), judged(exited(Rung::blocking, 2))}, {});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(v.reason.find("looks like the program's own failure (native: exited with 2") != std::string::npos);
  v = decide_run_verdict({judged(exited(Rung::native, 2), 0), judged(exited(Rung::native, 0), 1)}, {});
  CHECK(v.kind == VerdictKind::flaky);
  CHECK(v.reason.rfind("flaky, without a CUDA error: native: 1/2 failed", 0) == 0);
}

TEST_CASE("clean: a program that never used CUDA had nothing to fence") {
  auto fence = exited(Rung::fence, 0);
  InterposerLog log;
  log.summary.loaded = true;
  fence.interposer = log;
  const auto v = decide_run_verdict({judged(exited(Rung::native, 0)), judged(fence)}, {});
  CHECK(v.kind == VerdictKind::clean);
  CHECK(exit_code_of(v) == 0);
  CHECK(v.reason.find("never used CUDA") != std::string::npos);
}

TEST_CASE("CUDA that cannot start is the machine's: inconclusive, exit 3") {
  const char* no_driver = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n";
  const char* no_device = "cudaErrorNoDevice: no CUDA-capable device is detected\n";
  auto v = decide_run_verdict({judged(exited(Rung::native, 1, no_driver)), judged(exited(Rung::blocking, 1, no_device))}, {});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(exit_code_of(v) == 3);
  CHECK(v.reason.find("CUDA could not start in the program") != std::string::npos);
  // A real fault beside it is not the machine's.
  v = decide_run_verdict({judged(exited(Rung::native, 1, no_driver)), judged(fence_fault())}, {});
  CHECK(v.kind != VerdictKind::inconclusive);
  CHECK(exit_code_of(v) == 1);
}

TEST_CASE("does not start: exit code 2") {
  const auto v = decide_run_verdict({judged(exited(Rung::native, 127, "sh: 1: trian.py: not found\n"))}, {});
  CHECK(v.kind == VerdictKind::does_not_start);
  CHECK(exit_code_of(v) == 2);
  CHECK(v.reason.find("trian.py: not found") != std::string::npos);
  const auto none = decide_run_verdict({}, {{Rung::fence, "the fence interposer was not found"}});
  CHECK(none.kind == VerdictKind::inconclusive);
  CHECK(none.reason == "no rung ran");
}

TEST_CASE("machine Xids are noted once") {
  auto o = exited(Rung::native, 0);
  o.xid.push_back(*cudadiag::host::parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, DBE"));
  const auto v = decide_run_verdict({judged(o), judged(o), judged(fence_clean())}, {});
  int count = 0;
  for (const auto& n : v.notes) count += n.find("Xid 48") != std::string::npos;
  CHECK(count == 1);
  CHECK(has_note(v, "points at the machine"));
}

TEST_CASE("never clean when a process of the run used CUDA outside the fence, memcheck or not") {
  auto escaped = fence_clean();
  escaped.interposer->process_events.push_back(
      {777, "escaped: a set-user-ID or set-group-ID program (the loader ignores LD_PRELOAD)", "/usr/bin/sudo", true});
  escaped.interposer->escapes = 1;
  auto sanitized = exited(Rung::sanitizer, 0);
  sanitized.sanitizer = cudadiag::sanitizer::MemcheckReport{};
  const std::vector<RunJudgement> runs{judged(exited(Rung::native, 0)), judged(escaped), judged(sanitized)};
  const auto v = decide_run_verdict(runs, {});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(exit_code_of(v) == 1);
  CHECK(v.reason ==
        "no run failed, but a process of the run may have used CUDA outside the fence: process 777 (/usr/bin/sudo): "
        "escaped: a set-user-ID or set-group-ID program (the loader ignores LD_PRELOAD)");
  CHECK_FALSE(has_note(v, "outside the fence: process 777"));  // the reason says it
}

TEST_CASE("a restored preload and a ring without room are noted; the verdict rests on the runs") {
  auto o = fence_clean();
  o.interposer->process_events.push_back({12, "LD_PRELOAD restored", "/usr/bin/env", false});
  o.interposer->ring.no_room = "the ring could not be written: no room in /tmp/x; allocations and launches were not "
                               "recorded";
  const std::vector<RunJudgement> runs{judged(exited(Rung::native, 0)), judged(o)};
  const auto v = decide_run_verdict(runs, {});
  CHECK(v.kind == VerdictKind::clean);
  CHECK(has_note(v, "fence: process 12 (/usr/bin/env): LD_PRELOAD restored"));
  CHECK(has_note(v, "fence: the ring could not be written: no room in /tmp/x"));
}

TEST_CASE("a driver that does not match the runtime is CUDA that cannot start, as in repro") {
  // cudaErrorUnsupportedPtxVersion is of class driver_mismatch: repro skips such a case as
  // "CUDA unusable" (evidence::cuda_could_not_start), and run's verdict says the same.
  const char* ptx = "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain. "
                    "(cudaErrorUnsupportedPtxVersion)\n";
  const auto j = judged(exited(Rung::native, 1, ptx));
  REQUIRE(j.error);
  CHECK(j.error->error_class == cudadiag::taxonomy::ErrorClass::driver_mismatch);
  const auto v = decide_run_verdict({j}, {});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(v.cuda_could_not_start);
  CHECK(exit_code_of(v) == 3);
  CHECK(exit_code_of(v, /*interrupted=*/true) == 1);
}

TEST_CASE("a fence rung the tool's own setting broke checked nothing: never clean, and the coverage says so") {
  // --rungs native,fence: the fence interposer broke the program's CUDA IPC hand-over and
  // the parent waited until its deadline.
  auto fence = fence_clean();
  fence.interposer->summary.side = FenceSide::back;  // the guards sat after every buffer
  fence.child.ending = cudadiag::runner::Ending::timeout;
  fence.child.exit_code.reset();
  fence.child.err = capture("RuntimeError: invalid device pointer\n");
  auto broken = judged(fence);
  REQUIRE(broken.outcome == RunOutcome::timeout);
  REQUIRE(broken.fence_reach);
  REQUIRE(broken.fence_reach->effective);  // the guards sat where they should: the run still checked nothing
  broken.broken_by = "the fence interposer breaks this program: `RuntimeError: invalid device pointer`";
  const std::vector<RunJudgement> runs{judged(exited(Rung::native, 0)), broken};

  const auto v = decide_run_verdict(runs, {{Rung::sanitizer, "--sanitize never"}});
  CHECK(v.kind == VerdictKind::inconclusive);
  CHECK(exit_code_of(v) == 1);
  INFO(v.reason);
  CHECK_THAT(v.reason, Catch::StartsWith("no run failed, but every rung that could have seen a silent overrun was "
                                         "broken by a setting of cudadiag's own"));
  CHECK_THAT(v.reason, Catch::Contains("the fence rung checked nothing: the fence interposer breaks this program: "
                                       "`RuntimeError: invalid device pointer` (cudadiag's own setting"));
  CHECK_THAT(v.reason, Catch::Contains("the sanitizer did not run: --sanitize never"));
  CHECK_THAT(v.reason, !Catch::Contains("checked past the end"));
  CHECK_THAT(v.reason, !Catch::Contains("effective"));
  CHECK(has_note(v, "fence: the fence interposer breaks this program"));
  CHECK(has_note(v, "the run checked nothing"));

  // The coverage claims nothing for it.
  CHECK_FALSE(v.coverage.past_end);
  CHECK_FALSE(v.coverage.use_after_free);
  CHECK_FALSE(v.coverage.allocations);
  CHECK(v.coverage.seen.empty());
  CHECK(directions_text(v.coverage).empty());
  CHECK(std::find(v.coverage.unseen.begin(), v.coverage.unseen.end(),
                  "overruns past the end (no effective fence rung guarded the ends)") != v.coverage.unseen.end());
  CHECK(ladder_coverage(runs).seen.empty());

  // Under --sanitize auto, memcheck runs: the fence saw nothing.
  const auto memcheck = plan_memcheck(SanitizeMode::automatic, runs);
  CHECK(memcheck.run);
  CHECK(memcheck.reason == "--sanitize auto: no fenced run could have seen an overrun");

  // memcheck running clean is enough, and the verdict rests on it alone.
  auto san = exited(Rung::sanitizer, 0);
  san.sanitizer = cudadiag::sanitizer::MemcheckReport{};
  auto with_memcheck = runs;
  with_memcheck.push_back(judged(san));
  const auto m = decide_run_verdict(with_memcheck, {});
  CHECK(m.kind == VerdictKind::clean);
  CHECK(m.reason ==
        "all 2 runs clean (1 broken by a setting of cudadiag's own not counted); memcheck found nothing");
  CHECK_FALSE(m.coverage.past_end);
  CHECK(m.coverage.memcheck);
}

TEST_CASE("a blocking rung the tool broke is not counted; an effective fence still makes the program clean") {
  auto blocking = judged(exited(Rung::blocking, 1, "RuntimeError: invalid device pointer\n"));
  REQUIRE(blocking.outcome == RunOutcome::exit_code);
  blocking.broken_by = "PYTORCH_NO_CUDA_MEMORY_CACHING=1 breaks this program: `RuntimeError: invalid device pointer`";
  auto fence = fence_clean();
  fence.interposer->summary.side = FenceSide::back;
  const auto v = decide_run_verdict({judged(exited(Rung::native, 0)), blocking, judged(fence)}, {});
  CHECK(v.kind == VerdictKind::clean);
  CHECK(v.reason == "all 2 runs clean (1 broken by a setting of cudadiag's own not counted); the fence was effective "
                    "in every fenced run; checked past the end");
  CHECK(v.coverage.past_end);
}

TEST_CASE("the coverage never contradicts an exposure: the guard that caught the overrun guarded the end") {
  // A process of the run escaped the fence (its fence was not effective for the verdict's
  // clean), but the fenced buffer's guard caught the overrun.
  auto o = fence_fault();
  o.interposer->process_events.push_back(
      {777, "escaped: a set-user-ID or set-group-ID program (the loader ignores LD_PRELOAD)", "/usr/bin/sudo", true});
  o.interposer->escapes = 1;
  const auto fence = judged(o);
  REQUIRE(fence.fence);
  REQUIRE_FALSE(fence.fence->effective);
  const auto v = decide_run_verdict({judged(exited(Rung::native, 0)), fence}, {});
  CHECK(v.kind == VerdictKind::exposed);
  REQUIRE(v.first_exposed_by);
  CHECK(*v.first_exposed_by == Rung::fence);
  CHECK(v.coverage.past_end);
  CHECK(directions_text(v.coverage) == "past the end");
  for (const auto& line : v.coverage.unseen) {
    INFO(line);
    CHECK(line.find("overruns past the end") == std::string::npos);
  }
  CHECK(has_note(v, "outside the fence: process 777"));
}

TEST_CASE("memcheck's records of API errors the program handled do not keep it from being clean") {
  cudadiag::sanitizer::MemcheckReport m;
  cudadiag::sanitizer::Finding api;
  api.record_kind = "Api";
  api.api = cudadiag::sanitizer::ApiError{"cudaFuncGetAttributes", 209, "cudaErrorNoKernelImageForDevice", ""};
  m.findings.push_back(api);
  m.api_errors = 100;
  auto san = exited(Rung::sanitizer, 0);
  san.sanitizer = m;
  const auto v = decide_run_verdict({judged(exited(Rung::native, 0)), judged(san)}, {{Rung::fence, "not found"}});
  CHECK(v.kind == VerdictKind::clean);
  CHECK(v.reason == "all 2 runs clean; memcheck found nothing");
}

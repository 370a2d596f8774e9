// What a ladder could and could not see (coverage.h), the fence's findings without a
// fault (fence_findings.h), and the ring records behind them (slack writes, launches that
// never returned), written by the interposer's own writer.
#include <catch2/catch.hpp>

#include <algorithm>

#include "ring_fixture.h"
#include "run/coverage.h"
#include "run/fence_findings.h"
#include "run/judge.h"
#include "run/ring_reader.h"

using namespace cudadiag;
using namespace cudadiag::run;
using test::ScopedWriter;

namespace {

RunJudgement fenced(Rung rung, FenceSide side, bool effective, std::uint64_t allocations, std::uint64_t n_fenced) {
  RunJudgement j;
  j.rung = rung;
  FenceEffect e;
  e.effective = effective;
  j.fence = e;
  FenceReach r;
  r.side = side;
  r.effective = effective;
  r.allocations = allocations;
  r.fenced = n_fenced;
  r.quarantine_limit_bytes = 1ull << 30;
  r.slack_watched = true;
  j.fence_reach = r;
  return j;
}

}  // namespace

TEST_CASE("ring: slack writes and launches that returned come back as written", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  ScopedWriter w(file, test::small_limits(8, 8));
  REQUIRE(w.attached());
  w->set_cuda_seen();
  REQUIRE(w->claim(4242));
  const auto a = w->add_allocation(test::fenced_event(0x7f32309ff060, 4002));
  w->add_slack_watched();
  const auto done = w->add_launch(test::launch_event(*w, "_Z10fill_bytesPhmi", 0x7f32309ff060));
  w->launch_returned(done);
  w->add_launch(test::launch_event(*w, "_Z4spinPi", 0x7f32309ff060));  // never returns
  interposer::SlackWriteEvent e;
  e.allocation_seq = a.seq;
  e.address = 0x7f32309ff060;
  e.bytes = 4002;
  e.first_offset = 0;
  e.last_offset = 1;
  e.slack_bytes = 14;
  e.seen_at = ring::SlackCheck::free;
  e.pid = 4242;
  for (std::uint32_t i = 0; i < ring::kMaxSlackWrites + 3; ++i) w->add_slack_write(e);

  const RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.summary.slack_watched);
  CHECK(r.log.summary.side == FenceSide::back);
  REQUIRE(r.log.launches.size() == 2);
  CHECK(r.log.launches[0].returned);
  CHECK_FALSE(r.log.launches[1].returned);
  REQUIRE(r.log.slack_writes.size() == ring::kMaxSlackWrites);  // the header keeps 16, counts the rest
  CHECK(r.log.slack_writes_lost == 3);
  CHECK(r.log.slack_writes[0].bytes == 4002);
  CHECK(r.log.slack_writes[0].last_offset == 1);
  CHECK(r.log.slack_writes[0].seen_at == "seen at free");

  // The findings: the kernel passed the buffer is named; the launch that never returned hangs.
  const auto found = slack_findings(r.log);
  REQUIRE(found.size() == ring::kMaxSlackWrites);
  CHECK(found[0].kernels == std::vector<std::string>{"fill_bytes(unsigned char*, unsigned long, int)", "spin(int*)"});
  CHECK_THAT(found[0].line, Catch::StartsWith("a write 0 to 1 bytes past the end of allocation #0 (4002 bytes at "
                                              "0x7f32309ff060 from cuMemAlloc_v2), inside the alignment slack (14 "
                                              "bytes before the guard), seen at free; kernels passed #0: fill_bytes"));
  const auto hang = hang_finding(r.log);
  REQUIRE(hang);
  CHECK(hang->kernel == "spin(int*)");
  CHECK(hang->launch_seq == 1);
  CHECK_THAT(hang->line, Catch::Contains("never finished"));
}

TEST_CASE("ring: a slack record that contradicts itself is dropped and counted", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  ScopedWriter w(file, test::small_limits(8, 8));
  REQUIRE(w.attached());
  interposer::SlackWriteEvent e;
  e.first_offset = 5;
  e.last_offset = 2;  // before the first
  e.slack_bytes = 14;
  w->add_slack_write(e);
  e.first_offset = 0;
  e.last_offset = 14;  // past the slack
  w->add_slack_write(e);
  const RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.slack_writes.empty());
  CHECK(r.log.slack_writes_lost == 2);
}

TEST_CASE("hang: every launch returned, or none recorded: no hang", "[fence_findings]") {
  InterposerLog log;
  CHECK_FALSE(hang_finding(log));
  LaunchRecord l;
  l.kernel = "k";
  l.returned = true;
  log.launches.push_back(l);
  CHECK_FALSE(hang_finding(log));
}

TEST_CASE("coverage: both directions from the two fence rungs; what stays unseen", "[coverage]") {
  std::vector<RunJudgement> runs{fenced(Rung::fence, FenceSide::back, true, 10, 10),
                                 fenced(Rung::fence_front, FenceSide::front, true, 10, 9)};
  runs[1].fence_reach->unfenced["host memory"] = 1;  // not device memory: no blind spot
  auto c = ladder_coverage(runs);
  CHECK(c.past_end);
  CHECK(c.before_start);
  CHECK(c.slack_writes);
  CHECK(c.use_after_free);
  CHECK(directions_text(c) == "past the end and before the start");
  REQUIRE(c.fenced);
  CHECK(*c.fenced == 9);  // the smallest share
  CHECK(*c.allocations == 10);
  CHECK(c.unfenced.empty());
  CHECK_FALSE(fence_blind_somewhere(c));
  CHECK_THAT(c.seen[0], Catch::Contains("(9 of 10 allocations fenced)"));
  CHECK_THAT(c.unseen[0], Catch::Contains("reads in the alignment slack"));

  // Only the end's rung, and it could not fence a managed buffer.
  runs = {fenced(Rung::fence, FenceSide::back, true, 3, 2)};
  runs[0].fence_reach->unfenced["managed memory"] = 1;
  c = ladder_coverage(runs);
  CHECK(directions_text(c) == "past the end");
  CHECK(fence_blind_somewhere(c));
  CHECK(std::find(c.unseen.begin(), c.unseen.end(), "1 allocation(s) left unfenced (managed memory): nothing watched them") !=
        c.unseen.end());
  CHECK_THAT(c.unseen[0], Catch::Contains("underruns before the start"));

  // A fence rung that recycled freed buffers watched no use after free; the fence-front
  // rung's quarantine did.
  runs = {fenced(Rung::fence, FenceSide::back, true, 10, 10)};
  runs[0].fence_reach->recycle_limit_bytes = 4096ull << 20;
  c = ladder_coverage(runs);
  CHECK_FALSE(c.use_after_free);
  CHECK(c.recycled);
  CHECK(std::none_of(c.seen.begin(), c.seen.end(), [](const std::string& s) { return s.find("use after free") != std::string::npos; }));
  CHECK(std::any_of(c.unseen.begin(), c.unseen.end(), [](const std::string& s) {
    return s.find("use after free: the fence rung keeps freed buffers mapped") != std::string::npos;
  }));
  runs.push_back(fenced(Rung::fence_front, FenceSide::front, true, 10, 10));
  c = ladder_coverage(runs);
  CHECK(c.use_after_free);
  CHECK(std::any_of(c.seen.begin(), c.seen.end(), [](const std::string& s) { return s.find("use after free while") != std::string::npos; }));

  // A fence that was not effective guards nothing.
  c = ladder_coverage({fenced(Rung::fence, FenceSide::back, false, 3, 0)});
  CHECK(directions_text(c).empty());
  CHECK(fence_blind_somewhere(c));
}

TEST_CASE("memcheck plan: auto escalates when the fence was blind, limits itself to a suspect kernel", "[coverage]") {
  std::vector<RunJudgement> runs{fenced(Rung::fence, FenceSide::back, true, 3, 3)};
  CHECK_FALSE(plan_memcheck(SanitizeMode::automatic, runs).run);
  CHECK(plan_memcheck(SanitizeMode::always, runs).run);
  CHECK_FALSE(plan_memcheck(SanitizeMode::never, runs).run);

  runs[0].fence_reach->unfenced["memory pool other than the device's default"] = 2;
  auto p = plan_memcheck(SanitizeMode::automatic, runs);
  CHECK(p.run);
  CHECK_THAT(p.reason, Catch::Contains("2 (memory pool other than the device's default)"));
  CHECK(p.kernel.empty());

  // A program that never used CUDA: nothing to escalate for.
  RunJudgement none = fenced(Rung::fence, FenceSide::back, false, 0, 0);
  none.fence->cuda_unused = true;
  CHECK_FALSE(plan_memcheck(SanitizeMode::automatic, {none}).run);

  // The fence attributed a fault to a buffer a kernel was passed: memcheck looks at that kernel.
  RunJudgement hit = fenced(Rung::fence, FenceSide::back, true, 3, 3);
  hit.outcome = RunOutcome::crashed;
  Attribution a;
  a.certain = true;
  a.suspect_uses_allocation = true;
  LaunchRecord l;
  l.kernel = "void ns::scatter<float, 4>(float*, int const*, long)";
  a.suspect = l;
  hit.attribution = a;
  p = plan_memcheck(SanitizeMode::automatic, {hit});
  CHECK(p.run);
  CHECK(p.kernel == "ns::scatter");
  CHECK(kernel_base_name("fill_bytes(unsigned char*, unsigned long, int)") == "fill_bytes");

  // The judged sanitizer run knows it was limited; coverage does not claim the whole program.
  RunObservation obs;
  obs.rung = Rung::sanitizer;
  obs.argv = {"compute-sanitizer", "--tool", "memcheck", "--kernel-name", "kns=ns::scatter", "./prog"};
  obs.sanitizer = sanitizer::MemcheckReport{};
  RunJudgement san = judge_run(obs);
  CHECK(san.memcheck_kernels == "ns::scatter");
  const auto c = ladder_coverage({san});
  CHECK_FALSE(c.memcheck);
  REQUIRE(c.seen.size() == 1);
  CHECK_THAT(c.seen[0], Catch::Contains("kernels named like ns::scatter"));
}

TEST_CASE("coverage: how far past the end a fenced buffer is watched", "[coverage]") {
  auto scaled = fenced(Rung::fence, FenceSide::back, true, 10, 10);
  scaled.fence_reach->granularity = 2ull << 20;
  scaled.fence_reach->guard_limit_bytes = 1ull << 30;
  scaled.fence_reach->guard_total_limit_bytes = 16ull << 40;
  const auto has = [](const std::vector<std::string>& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  SECTION("scaled: as far as the buffer is large, at most the per-buffer bound") {
    const Coverage c = ladder_coverage({scaled});
    CHECK(c.guard_scaled);
    CHECK(c.guard_reach_bytes == (1ull << 30));
    CHECK(has(c.seen, "reads and writes past the end of a fenced buffer, from the first byte to as far past it as "
                      "the buffer is large (at most 1 GiB) (10 of 10 allocations fenced)"));
    CHECK(has(c.unseen, "further from a buffer's end (start) than the buffer is large, or than 1 GiB"));
    CHECK_FALSE(has(c.unseen, "got a guard smaller"));
  }
  SECTION("scaled, some guards cut by the bound on all guards: said, with how many") {
    scaled.fence_reach->guards_cut = 3;
    const Coverage c = ladder_coverage({scaled});
    CHECK(c.guards_cut == 3);
    CHECK(has(c.unseen, "3 buffer(s) got a guard smaller than their size allows, down to one granule (2 MiB): the "
                        "bound on all guards (16 TiB of address space) was reached"));
  }
  SECTION("granule: one granule, and what it misses") {
    scaled.fence_reach->guard_mode = cudadiag::fence::GuardMode::granule;
    scaled.fence_reach->guards_cut = 0;
    const Coverage c = ladder_coverage({scaled});
    CHECK_FALSE(c.guard_scaled);
    CHECK(c.guard_reach_bytes == (2ull << 20));
    CHECK(has(c.seen, "from the first byte to one granule (2 MiB) past it (CUDADIAG_GUARD=granule)"));
    CHECK(has(c.unseen, "further than one granule (2 MiB) from a buffer's end (start): they jump the guard"));
  }
  SECTION("front: before the start, as far as the buffer is large") {
    auto front = scaled;
    front.rung = Rung::fence_front;
    front.fence_reach->side = FenceSide::front;
    const Coverage c = ladder_coverage({front});
    CHECK(has(c.seen, "before the start of a fenced buffer, from the first byte to as far before it as the buffer "
                      "is large (at most 1 GiB)"));
  }
  SECTION("one granule in any fenced run is the reach stated") {
    auto granule = scaled;
    granule.rung = Rung::fence_front;
    granule.fence_reach->side = FenceSide::front;
    granule.fence_reach->guard_mode = cudadiag::fence::GuardMode::granule;
    const Coverage c = ladder_coverage({scaled, granule});
    CHECK_FALSE(c.guard_scaled);
    CHECK(c.guard_reach_bytes == (2ull << 20));
  }
}

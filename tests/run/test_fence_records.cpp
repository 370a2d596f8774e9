// Several processes of one fenced run: the main ring and "<ring>.<pid>" files, combined
// into the one log the judge gets.
#include <catch2/catch.hpp>

#include "run/fence_records.h"
#include "ring_fixture.h"

using namespace cudadiag;
using namespace cudadiag::run;
using cudadiag::test::ScopedWriter;

namespace {

// A ring of process `pid` with `buffers` fenced allocations from `base` and one launch.
void write_process(const std::filesystem::path& file, int pid, std::uint64_t base, int buffers) {
  ScopedWriter w(file, test::small_limits(8, 8));
  REQUIRE(w.attached());
  w->add_process_loaded();
  w->set_cuda_seen();
  REQUIRE(w->claim(pid));
  for (int i = 0; i < buffers; ++i) w->add_allocation(test::fenced_event(base + i * 0x400000ull + 0x1ff060, 4000));
  w->add_launch(test::launch_event(*w, "_Z10fill_bytesPhmi", base + 0x1ff060));
}

}  // namespace

TEST_CASE("fence records: one process", "[fence_records]") {
  test::TempDir dir;
  write_process(dir / "fence-0.ring", 1000, 0x7f0000000000, 2);
  const auto records = read_fence_records(dir / "fence-0.ring");
  REQUIRE(records.rings.size() == 1);
  CHECK(records.pids() == std::vector<int>{1000});
  const auto j = log_for_judging(records, std::nullopt);
  REQUIRE(j.log);
  CHECK(j.error.empty());
  CHECK(j.process == 1000);
  CHECK(j.log->summary.allocations == 2);
  CHECK(j.log->allocations.size() == 2);
}

TEST_CASE("fence records: the faulting process's log, every process's counters", "[fence_records]") {
  test::TempDir dir;
  const auto main_ring = dir / "fence-0.ring";
  write_process(main_ring, 1000, 0x7f0000000000, 2);
  write_process(dir / "fence-0.ring.1003", 1003, 0x7e0000000000, 3);
  test::write_bytes(dir / "fence-0.ring.1002", "not a ring");
  test::write_bytes(dir / "fence-1.ring.1004", "another run's");  // not this run's file

  const auto records = read_fence_records(main_ring);
  REQUIRE(records.rings.size() == 3);  // main, .1002, .1003
  CHECK(records.pids() == std::vector<int>{1000, 1003});

  // No Xid names a process: the main file's allocations.
  auto j = log_for_judging(records, std::nullopt);
  REQUIRE(j.log);
  CHECK(j.process == 1000);
  CHECK(j.log->allocations.size() == 2);
  CHECK(j.log->summary.allocations == 5);  // counted over both processes
  CHECK(j.log->summary.fenced == 5);
  CHECK(j.log->summary.launches == 2);
  CHECK(j.log->summary.loaded);
  CHECK(j.log->summary.cuda_seen);
  CHECK_THAT(j.error, Catch::Contains("fence-0.ring.1002"));  // the unreadable one is named

  // An Xid 31 of pid 1003: that process's allocations are the ones to attribute.
  j = log_for_judging(records, 1003);
  CHECK(j.process == 1003);
  REQUIRE(j.log->allocations.size() == 3);
  CHECK(j.log->allocations[0].address == 0x7e00001ff060);
  CHECK(j.log->summary.allocations == 5);
  // A pid no ring belongs to changes nothing.
  CHECK(log_for_judging(records, 77).process == 1000);
}

TEST_CASE("fence records: no ring at all, and a ring no process claimed", "[fence_records]") {
  test::TempDir dir;
  auto j = log_for_judging(read_fence_records(dir / "fence-0.ring"), std::nullopt);
  CHECK_FALSE(j.log);
  CHECK_THAT(j.error, Catch::Contains("fence-0.ring"));

  {  // A shell that loaded the interposer and never used CUDA.
    ScopedWriter w(dir / "fence-1.ring", test::small_limits(8, 8));
    REQUIRE(w.attached());
    w->add_process_loaded();
  }
  const auto records = read_fence_records(dir / "fence-1.ring");
  CHECK(records.pids().empty());
  j = log_for_judging(records, std::nullopt);
  REQUIRE(j.log);
  CHECK(j.log->summary.loaded);
  CHECK_FALSE(j.log->summary.cuda_seen);
}

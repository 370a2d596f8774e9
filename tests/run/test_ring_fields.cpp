// The ring's field lists (lib/fence/ring_format.h): a record written by the interposer's
// own writer reads back with every field it carries, the device and the context
// included, and cudadiag-ring-dump's lines (run/ring_text.h) show each of them.
// The checks run over the lists themselves, so a field added to a list is covered here.
#include <catch2/catch.hpp>

#include <cstring>
#include <type_traits>

#include "fence/ring_format.h"
#include "ring_fixture.h"
#include "run/ring_reader.h"
#include "run/ring_text.h"

using namespace cudadiag;
using namespace cudadiag::run;
using test::ScopedWriter;

namespace {

// A value of the field's type that differs from every other field's and from its initial value.
template <class T>
T distinct_value(int n) {
  if constexpr (std::is_same_v<T, ring::Dim3>) {
    ring::Dim3 d;
    for (int i = 0; i < 3; ++i) d[i] = static_cast<std::uint32_t>(10 * n + i + 2);
    return d;
  } else {
    return static_cast<T>(0x1001 * n + 0x40);
  }
}

// `e` is the event, `n` counts the fields set.
#define SET_DISTINCT(type, name, ...) e.name = distinct_value<type>(++n);
// `e` the event, `r` the record read back.
#define CHECK_CARRIED(type, name, initial, ...)                                \
  {                                                                           \
    INFO(#name);                                                              \
    CHECK(r.name == e.name);                                                  \
    CHECK_FALSE(r.name == [] { type x = initial; return x; }());              \
  }
// `named` is an event with a kernel name and pointer arguments, `e` the fields to give it.
#define COPY_INTO_NAMED(type, name, ...) named.name = e.name;
// `line` is the dump's line of record `r`.
#define CHECK_SHOWN(type, name, ...)                                          \
  {                                                                           \
    INFO(#name << " in " << line);                                            \
    CHECK(line.find(std::string(" ") + #name + "=") != std::string::npos);    \
  }

RingRead ring_written_and_read(const std::filesystem::path& file, void (*write)(interposer::RingWriter&)) {
  {
    ScopedWriter w(file, test::small_limits(4, 4));
    REQUIRE(w.attached());
    write(*w);
  }
  RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.torn_records == 0);
  return r;
}

}  // namespace

TEST_CASE("ring fields: an allocation reads back with every field the writer wrote", "[ring_fields]") {
  test::TempDir dir;
  static interposer::AllocationEvent e;
  e = test::fenced_event(0x7f32309ff060, 4000);
  int n = 0;
  CUDADIAG_RING_ALLOCATION_FIELDS(SET_DISTINCT, CUDADIAG_RING_SKIP)
  const RingRead read = ring_written_and_read(dir / "ring", [](interposer::RingWriter& w) { w.add_allocation(e); });
  REQUIRE(read.log.allocations.size() == 1);
  const AllocationRecord& r = read.log.allocations[0];
  CUDADIAG_RING_ALLOCATION_FIELDS(CHECK_CARRIED, CUDADIAG_RING_SKIP)
  const std::string line = allocation_line(r);
  CUDADIAG_RING_ALLOCATION_FIELDS(CHECK_SHOWN, CUDADIAG_RING_SKIP)
}

TEST_CASE("ring fields: the device and the context an allocation was made in come back and are shown",
          "[ring_fields]") {
  test::TempDir dir;
  static interposer::AllocationEvent e;
  e = test::fenced_event(0x7f32309ff060, 4000);
  e.stream = 0x77;
  e.context = 0x5a5a00001000;
  e.device = 3;
  const RingRead read = ring_written_and_read(dir / "ring", [](interposer::RingWriter& w) { w.add_allocation(e); });
  REQUIRE(read.log.allocations.size() == 1);
  const AllocationRecord& a = read.log.allocations[0];
  CHECK(a.device == 3);
  CHECK(a.context == 0x5a5a00001000);
  CHECK(a.stream == 0x77);
  CHECK(allocation_line(a) ==
        "allocation seq=0 address=0x7f32309ff060 bytes=4000 mapped_begin=0x7f3230800000 mapped_end=0x7f3230a00000 "
        "guard_begin=0x7f3230a00000 guard_end=0x7f3230c00000 stream=0x77 context=0x5a5a00001000 device=3 origin_pid=0 "
        "origin_seq=0 guard_wanted=2097152 side=back freed=false released=false api=cuMemAlloc_v2 reason=");
}

TEST_CASE("ring fields: a launch reads back with every field the writer wrote", "[ring_fields]") {
  test::TempDir dir;
  static interposer::LaunchEvent e;
  e = interposer::LaunchEvent{};
  int n = 0;
  CUDADIAG_RING_LAUNCH_FIELDS(SET_DISTINCT, CUDADIAG_RING_SKIP)
  const RingRead read = ring_written_and_read(dir / "ring", [](interposer::RingWriter& w) {
    interposer::LaunchEvent named = test::launch_event(w, "_Z10fill_bytesPhmi", 0x7f32309ff060);
    CUDADIAG_RING_LAUNCH_FIELDS(COPY_INTO_NAMED, CUDADIAG_RING_SKIP)
    w.add_launch(named);
  });
  REQUIRE(read.log.launches.size() == 1);
  const LaunchRecord& r = read.log.launches[0];
  CUDADIAG_RING_LAUNCH_FIELDS(CHECK_CARRIED, CUDADIAG_RING_SKIP)
  CHECK(r.kernel == "fill_bytes(unsigned char*, unsigned long, int)");
  CHECK(r.pointer_args == std::vector<std::uint64_t>{0x7f32309ff060});
  const std::string line = launch_line(r);
  CUDADIAG_RING_LAUNCH_FIELDS(CHECK_SHOWN, CUDADIAG_RING_SKIP)
}

TEST_CASE("ring fields: the device and the context a launch ran in come back and are shown", "[ring_fields]") {
  test::TempDir dir;
  const RingRead read = ring_written_and_read(dir / "ring", [](interposer::RingWriter& w) {
    interposer::LaunchEvent e = test::launch_event(w, "_Z10fill_bytesPhmi", 0x7f32309ff060);
    e.context = 0x5a5a00002000;
    e.device = 1;
    w.launch_returned(w.add_launch(e));
  });
  REQUIRE(read.log.launches.size() == 1);
  const LaunchRecord& l = read.log.launches[0];
  CHECK(l.device == 1);
  CHECK(l.context == 0x5a5a00002000);
  CHECK(l.function == 0xf00d);
  CHECK(launch_line(l) ==
        "launch seq=0 kernel=fill_bytes(unsigned char*, unsigned long, int) function=0xf00d stream=0x5 "
        "context=0x5a5a00002000 grid=(8,1,1) block=(128,1,1) dynamic_smem=1024 device=1 api=cuLaunchKernel_ptsz "
        "returned=true pointer_args=0x7f32309ff060");
}

TEST_CASE("ring fields: a TMA descriptor reads back with every field the writer wrote", "[ring_fields]") {
  test::TempDir dir;
  static interposer::TmaEvent e;
  e = test::tma_event(0x7f32309ff060, true);
  int n = 0;
  CUDADIAG_RING_TMA_FIELDS(SET_DISTINCT, CUDADIAG_RING_SKIP)
  const RingRead read = ring_written_and_read(dir / "ring", [](interposer::RingWriter& w) { w.add_tma_map(e); });
  REQUIRE(read.log.tma_maps.size() == 1);
  const TmaMapRecord& r = read.log.tma_maps[0];
  CUDADIAG_RING_TMA_FIELDS(CHECK_CARRIED, CUDADIAG_RING_SKIP)
  CHECK(r.near_guard);
  const std::string line = tma_map_line(r);
  CUDADIAG_RING_TMA_FIELDS(CHECK_SHOWN, CUDADIAG_RING_SKIP)
}

TEST_CASE("ring fields: a slack write reads back with every field the writer wrote", "[ring_fields]") {
  test::TempDir dir;
  static interposer::SlackWriteEvent e;
  e = interposer::SlackWriteEvent{};
  int n = 0;
  CUDADIAG_RING_SLACK_WRITE_FIELDS(SET_DISTINCT, CUDADIAG_RING_SKIP)
  // The reader keeps only what a writer can have found: offsets inside the slack.
  e.first_offset = 1;
  e.last_offset = 2;
  e.slack_bytes = 14;
  e.seen_at = ring::SlackCheck::exit;
  const RingRead read = ring_written_and_read(dir / "ring", [](interposer::RingWriter& w) { w.add_slack_write(e); });
  REQUIRE(read.log.slack_writes.size() == 1);
  const SlackWriteRecord& r = read.log.slack_writes[0];
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CHECK_CARRIED, CUDADIAG_RING_SKIP)
  CHECK(r.seen_at == "seen at exit");
  const std::string line = slack_write_line(r);
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CHECK_SHOWN, CUDADIAG_RING_SKIP)
  CHECK(line.substr(line.size() - 13) == " seen at exit");
}

#undef SET_DISTINCT
#undef CHECK_CARRIED
#undef COPY_INTO_NAMED
#undef CHECK_SHOWN

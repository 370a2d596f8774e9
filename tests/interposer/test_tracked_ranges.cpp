// TrackedRanges: the interposer's table of allocations, sorted by address; a free finds
// its allocation, a launch argument the allocation it points into.
#include <catch2/catch.hpp>

#include <vector>

#include "apps/interposer/tracked_ranges.h"

using namespace cudadiag::interposer;

namespace {

Tracked range(std::uint64_t address, std::uint64_t bytes, Tracked::Kind kind = Tracked::Kind::unfenced,
              std::uint32_t slack = 0) {
  Tracked t;
  t.address = address;
  t.bytes = bytes;
  t.kind = kind;
  t.slack = slack;
  return t;
}

// The address of the entry holding `value`, or 0.
std::uint64_t holder_of(TrackedRanges& r, std::uint64_t value) {
  Tracked t;
  return r.containing(value, t) ? t.address : 0;
}

}  // namespace

TEST_CASE("tracked ranges: a value is found in the range that holds it, and only there", "[tracked_ranges]") {
  TrackedRanges r;
  // Inserted out of order: the table sorts them.
  REQUIRE(r.insert(range(0x3000, 0x100)));
  REQUIRE(r.insert(range(0x1000, 0x100)));
  REQUIRE(r.insert(range(0x2000, 0x800)));
  CHECK(holder_of(r, 0x1000) == 0x1000);  // the first byte
  CHECK(holder_of(r, 0x10ff) == 0x1000);  // the last
  CHECK(holder_of(r, 0x1100) == 0);       // one past the end
  CHECK(holder_of(r, 0x0fff) == 0);       // one before the start
  CHECK(holder_of(r, 0x27ff) == 0x2000);
  CHECK(holder_of(r, 0x2800) == 0);
  CHECK(holder_of(r, 0x3050) == 0x3000);
  CHECK(holder_of(r, 0) == 0);
  CHECK(holder_of(r, ~0ull) == 0);
  Tracked t;
  REQUIRE(r.containing(0x2400, t));
  CHECK(t.bytes == 0x800);
  CHECK(t.kind == Tracked::Kind::unfenced);
}

TEST_CASE("tracked ranges: a zero-byte allocation still holds its first address", "[tracked_ranges]") {
  TrackedRanges r;
  REQUIRE(r.insert(range(0x5000, 0)));
  CHECK(holder_of(r, 0x5000) == 0x5000);
  CHECK(holder_of(r, 0x5001) == 0);
  CHECK(holder_of(r, 0x4fff) == 0);
}

TEST_CASE("tracked ranges: a new range drops those it overlaps, and only those", "[tracked_ranges]") {
  TrackedRanges r;
  REQUIRE(r.insert(range(0x1000, 0x1000)));  // [0x1000, 0x2000)
  REQUIRE(r.insert(range(0x3000, 0x1000)));  // [0x3000, 0x4000)
  REQUIRE(r.insert(range(0x4000, 0x1000)));  // [0x4000, 0x5000)
  REQUIRE(r.insert(range(0x6000, 0x1000)));  // [0x6000, 0x7000)

  SECTION("touching ends do not overlap") {
    REQUIRE(r.insert(range(0x2000, 0x1000)));  // [0x2000, 0x3000) between two
    CHECK(holder_of(r, 0x1fff) == 0x1000);
    CHECK(holder_of(r, 0x2000) == 0x2000);
    CHECK(holder_of(r, 0x2fff) == 0x2000);
    CHECK(holder_of(r, 0x3000) == 0x3000);
  }
  SECTION("a range across the end of one and the start of two more replaces the three") {
    REQUIRE(r.insert(range(0x1800, 0x2900)));  // [0x1800, 0x4100)
    CHECK(holder_of(r, 0x1000) == 0);  // the first one's part before the new range is gone too
    CHECK(holder_of(r, 0x1800) == 0x1800);
    CHECK(holder_of(r, 0x40ff) == 0x1800);
    CHECK(holder_of(r, 0x4100) == 0);  // the third one is gone, not cut
    CHECK(holder_of(r, 0x6000) == 0x6000);
    bool quarantined = false;
    Tracked t;
    CHECK_FALSE(r.take_live(0x3000, t, quarantined));
    CHECK_FALSE(r.take_live(0x4000, t, quarantined));
  }
  SECTION("the same address again: the newer entry") {
    REQUIRE(r.insert(range(0x3000, 0x10, Tracked::Kind::fenced)));
    Tracked t;
    REQUIRE(r.containing(0x3000, t));
    CHECK(t.kind == Tracked::Kind::fenced);
    CHECK(t.bytes == 0x10);
    CHECK(holder_of(r, 0x3010) == 0);
  }
  SECTION("a range inside another replaces it") {
    REQUIRE(r.insert(range(0x6100, 0x10)));
    CHECK(holder_of(r, 0x6000) == 0);
    CHECK(holder_of(r, 0x6100) == 0x6100);
  }
}

TEST_CASE("tracked ranges: a free takes a live entry by its first address", "[tracked_ranges]") {
  TrackedRanges r;
  REQUIRE(r.insert(range(0x1000, 0x100, Tracked::Kind::fenced)));
  REQUIRE(r.insert(range(0x2000, 0x100, Tracked::Kind::quarantined)));
  Tracked t;
  bool quarantined = true;
  SECTION("an address inside is not the allocation's") {
    CHECK_FALSE(r.take_live(0x1010, t, quarantined));
    CHECK_FALSE(quarantined);
    CHECK(holder_of(r, 0x1000) == 0x1000);
  }
  SECTION("a pointer never seen") {
    CHECK_FALSE(r.take_live(0x9000, t, quarantined));
    CHECK_FALSE(quarantined);
  }
  SECTION("the live entry: handed out and gone") {
    REQUIRE(r.take_live(0x1000, t, quarantined));
    CHECK_FALSE(quarantined);
    CHECK(t.address == 0x1000);
    CHECK(t.kind == Tracked::Kind::fenced);
    CHECK(holder_of(r, 0x1000) == 0);
    CHECK_FALSE(r.take_live(0x1000, t, quarantined));
  }
  SECTION("a quarantined entry: a second free, told apart, and kept") {
    CHECK_FALSE(r.take_live(0x2000, t, quarantined));
    CHECK(quarantined);
    CHECK(holder_of(r, 0x2000) == 0x2000);
  }
}

TEST_CASE("tracked ranges: remove drops an entry of any kind, once", "[tracked_ranges]") {
  TrackedRanges r;
  REQUIRE(r.insert(range(0x1000, 0x100, Tracked::Kind::quarantined)));
  REQUIRE(r.insert(range(0x2000, 0x100)));
  CHECK_FALSE(r.remove(0x1001));
  CHECK(r.remove(0x1000));
  CHECK_FALSE(r.remove(0x1000));
  CHECK(holder_of(r, 0x1000) == 0);
  CHECK(holder_of(r, 0x2000) == 0x2000);
}

TEST_CASE("tracked ranges: keep_known keeps, in order, the values some entry holds", "[tracked_ranges]") {
  TrackedRanges r;
  REQUIRE(r.insert(range(0x1000, 0x100)));
  REQUIRE(r.insert(range(0x2000, 0x100, Tracked::Kind::quarantined)));
  std::vector<std::uint64_t> values{0x2050, 0x10, 0x1000, 0x1100, 0x10ff, 0x7};
  values.resize(r.keep_known(values.data(), values.size()));
  CHECK(values == std::vector<std::uint64_t>{0x2050, 0x1000, 0x10ff});
  CHECK(r.keep_known(values.data(), 0) == 0);
}

TEST_CASE("tracked ranges: with_slack pages through the live fenced entries with canaries", "[tracked_ranges]") {
  TrackedRanges r;
  REQUIRE(r.insert(range(0x1000, 0x10, Tracked::Kind::fenced, 8)));
  REQUIRE(r.insert(range(0x2000, 0x10, Tracked::Kind::fenced, 0)));        // flush: no slack
  REQUIRE(r.insert(range(0x3000, 0x10, Tracked::Kind::quarantined, 8)));  // freed
  REQUIRE(r.insert(range(0x4000, 0x10, Tracked::Kind::unfenced, 8)));
  REQUIRE(r.insert(range(0x5000, 0x10, Tracked::Kind::fenced, 16)));
  REQUIRE(r.insert(range(0x6000, 0x10, Tracked::Kind::fenced, 4)));
  Tracked out[2];
  REQUIRE(r.with_slack(out, 0, 2) == 2);
  CHECK(out[0].address == 0x1000);
  CHECK(out[1].address == 0x5000);
  CHECK(out[1].slack == 16);
  REQUIRE(r.with_slack(out, 2, 2) == 1);  // fewer than asked: the last page
  CHECK(out[0].address == 0x6000);
  CHECK(r.with_slack(out, 3, 2) == 0);
}

TEST_CASE("tracked ranges: the table grows past its first capacity and stays sorted", "[tracked_ranges]") {
  TrackedRanges r;
  constexpr std::uint64_t kCount = 2000;
  // Every other slot first, then the gaps: inserts land in the middle of the table.
  for (std::uint64_t i = 0; i < kCount; i += 2) REQUIRE(r.insert(range(0x100000 + i * 0x100, 0x80)));
  for (std::uint64_t i = 1; i < kCount; i += 2) REQUIRE(r.insert(range(0x100000 + i * 0x100, 0x80)));
  for (std::uint64_t i = 0; i < kCount; ++i) {
    const std::uint64_t a = 0x100000 + i * 0x100;
    if (holder_of(r, a + 0x7f) != a || holder_of(r, a + 0x80) != 0) FAIL("entry " << i << " at 0x" << std::hex << a);
  }
  for (std::uint64_t i = 0; i < kCount; i += 3) REQUIRE(r.remove(0x100000 + i * 0x100));
  for (std::uint64_t i = 0; i < kCount; ++i) {
    const std::uint64_t a = 0x100000 + i * 0x100;
    if (holder_of(r, a) != (i % 3 == 0 ? 0 : a)) FAIL("after removals, entry " << i);
  }
}

#include <catch2/catch.hpp>

#include "fence/guard_layout.h"

using namespace cudadiag::fence;

namespace {
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGran = 2 * kMiB;  // the driver's minimum VMM granularity on H100
}  // namespace

// Usable in constant expressions (nvcc and the interposer rely on that).
static_assert(mapped_size(4000, kGran, 16) == kGran);
static_assert(place(0x1000000, 4000, kGran, 16, Side::back, kGran).address == 0x1000000 + kGran - 4000);

TEST_CASE("mapped size: the request rounded to the alignment, then to whole granules", "[guard_layout]") {
  CHECK(mapped_size(0, kGran, 16) == kGran);  // at least one byte is mapped
  CHECK(mapped_size(1, kGran, 16) == kGran);
  CHECK(mapped_size(kGran, kGran, 16) == kGran);
  CHECK(mapped_size(kGran + 1, kGran, 16) == 2 * kGran);
  // The alignment can push a request over a granule boundary.
  CHECK(mapped_size(kGran - 8, kGran, 16) == kGran);
  CHECK(mapped_size(kGran - 8, 4096, 4096) == kGran);
  CHECK(mapped_size(4097, 4096, 16) == 8192);
  CHECK(reserved_size(mapped_size(4097, 4096, 16), 4096) == 12288);
  CHECK(reserved_size(mapped_size(4097, 4096, 16), 8192) == 16384);
}

TEST_CASE("geometry: powers of two, alignment within a granule", "[guard_layout]") {
  CHECK(valid_geometry(kGran, 16));
  CHECK(valid_geometry(4096, 4096));
  CHECK(valid_geometry(kGran, 1));
  CHECK_FALSE(valid_geometry(kGran, 24));
  CHECK_FALSE(valid_geometry(kGran, 0));
  CHECK_FALSE(valid_geometry(3 * kMiB, 16));
  CHECK_FALSE(valid_geometry(4096, 8192));
}

TEST_CASE("back fence: the buffer's last aligned block ends at the guard", "[guard_layout]") {
  const std::uint64_t base = 0x7f3230800000;
  // The measured fault: a 4,000-byte buffer at 0x7f32309ff060 faulted at 0x7f3230a00000,
  // exactly its end and the first byte of the guard.
  const Layout l = place(base, 4000, kGran, 16, Side::back, kGran);
  CHECK(l.address == 0x7f32309ff060);
  CHECK(l.end() == 0x7f3230a00000);
  CHECK(l.mapped_begin == base);
  CHECK(l.mapped_size == kGran);
  CHECK(l.guard_begin == 0x7f3230a00000);
  CHECK(l.guard_end == 0x7f3230a00000 + kGran);
  CHECK(l.reserved_size == 2 * kGran);
  CHECK(l.slack == 0);

  const Position p = locate(l, 0x7f3230a00000);
  CHECK(p.where == Where::past_end);
  CHECK(p.distance == 1);
  CHECK(p.in_guard);
}

TEST_CASE("back fence: a request that is not a multiple of the alignment leaves slack", "[guard_layout]") {
  const std::uint64_t base = 0x10000000;
  const Layout l = place(base, 4001, kGran, 16, Side::back, kGran);
  CHECK(l.address % 16 == 0);
  CHECK(l.address == base + kGran - 4016);
  CHECK(l.slack == 15);
  CHECK(l.end() + l.slack == l.guard_begin);
  // One byte past the end stays in the slack: mapped, no fault.
  const Position in_slack = locate(l, l.end());
  CHECK(in_slack.where == Where::past_end);
  CHECK(in_slack.distance == 1);
  CHECK_FALSE(in_slack.in_guard);
  // The 16th byte past the end is the guard's first.
  const Position first_guard_byte = locate(l, l.end() + 15);
  CHECK(first_guard_byte.distance == 16);
  CHECK(first_guard_byte.in_guard);

  // At 256-byte alignment a one-element overrun of a 4,000-byte buffer lands in slack.
  const Layout coarse = place(base, 4000, kGran, 256, Side::back, kGran);
  CHECK(coarse.slack == 96);
  CHECK_FALSE(locate(coarse, coarse.end() + 3).in_guard);
}

TEST_CASE("back fence: alignments of one byte and of a whole granule", "[guard_layout]") {
  const Layout exact = place(0x200000, 4001, kGran, 1, Side::back, kGran);
  CHECK(exact.slack == 0);
  CHECK(exact.end() == exact.guard_begin);
  const Layout granule = place(0x200000, 4001, 4096, 4096, Side::back, 4096);
  CHECK(granule.address == 0x200000);
  CHECK(granule.slack == 4096 - 4001);
}

TEST_CASE("back fence: zero bytes sit at the guard", "[guard_layout]") {
  const Layout l = place(0x400000, 0, kGran, 16, Side::back, kGran);
  CHECK(l.mapped_size == kGran);
  CHECK(l.address == l.guard_begin);
  CHECK(l.slack == 0);
  CHECK(locate(l, l.address).where == Where::past_end);
}

TEST_CASE("front fence: the buffer starts right after the guard", "[guard_layout]") {
  const std::uint64_t base = 0x20000000;
  const Layout l = place(base, 4000, kGran, 16, Side::front, kGran);
  CHECK(l.guard_begin == base);
  CHECK(l.guard_end == base + kGran);
  CHECK(l.mapped_begin == base + kGran);
  CHECK(l.address == base + kGran);
  CHECK(l.slack == 0);
  CHECK(l.reserved_size == 2 * kGran);

  const Position before = locate(l, l.address - 4);
  CHECK(before.where == Where::before_start);
  CHECK(before.distance == 4);
  CHECK(before.in_guard);
  const Position last = locate(l, l.address + 3999);
  CHECK(last.where == Where::inside);
  CHECK(last.distance == 3999);
  CHECK_FALSE(last.in_guard);
  // An overrun of a front-fenced buffer stays in mapped memory.
  const Position over = locate(l, l.end());
  CHECK(over.where == Where::past_end);
  CHECK_FALSE(over.in_guard);
}

TEST_CASE("locate without a guard: distances only", "[guard_layout]") {
  const Position p = locate(1000, 24, 0, 0, 1030);
  CHECK(p.where == Where::past_end);
  CHECK(p.distance == 7);
  CHECK_FALSE(p.in_guard);
  CHECK(locate(1000, 24, 0, 0, 1000).where == Where::inside);
  CHECK(locate(1000, 24, 0, 0, 1023).where == Where::inside);
  CHECK(locate(1000, 24, 0, 0, 1024).distance == 1);
  CHECK(locate(1000, 24, 0, 0, 999).where == Where::before_start);
  CHECK(locate(1000, 24, 0, 0, 999).distance == 1);
  // A huge address past the end does not wrap.
  CHECK(locate(1000, 24, 0, 0, ~0ull).where == Where::past_end);
}

TEST_CASE("guard size: as large as the mapping, at least one granule; one granule in granule mode", "[guard_layout]") {
  // Tiny: one byte maps one granule and gets a one-granule guard.
  CHECK(wanted_guard(mapped_size(1, kGran, 16), kGran, GuardMode::scaled) == kGran);
  CHECK(wanted_guard(0, kGran, GuardMode::scaled) == kGran);
  // A 4 MiB buffer: 4 MiB of guard, so a read 2 to 4 MiB past its end faults.
  CHECK(wanted_guard(mapped_size(4 * kMiB, kGran, 16), kGran, GuardMode::scaled) == 4 * kMiB);
  CHECK(wanted_guard(mapped_size(4 * kMiB + 1, kGran, 16), kGran, GuardMode::scaled) == 6 * kMiB);
  // Granule mode: one granule whatever the size.
  CHECK(wanted_guard(mapped_size(4 * kMiB, kGran, 16), kGran, GuardMode::granule) == kGran);
  CHECK(wanted_guard(64ull << 30, kGran, GuardMode::granule) == kGran);
  // Nothing held: the wanted guard, up to the per-buffer bound.
  CHECK(guard_size(4 * kMiB, kGran, 0) == 4 * kMiB);
  CHECK(guard_size(kMaxGuardBytes, kGran, 0) == kMaxGuardBytes);
}

TEST_CASE("guard size: the per-buffer and total bounds give the largest guard that fits, down to a granule",
          "[guard_layout]") {
  // Huge: a 64 GiB buffer is watched 1 GiB past its end.
  const std::uint64_t huge = mapped_size(64ull << 30, kGran, 16);
  CHECK(guard_size(wanted_guard(huge, kGran, GuardMode::scaled), kGran, 0) == kMaxGuardBytes);
  // The total bound: what is left, in whole granules.
  const std::uint64_t total = 64 * kMiB;
  CHECK(guard_size(8 * kMiB, kGran, 56 * kMiB, kMaxGuardBytes, total) == 8 * kMiB);      // fits exactly
  CHECK(guard_size(8 * kMiB, kGran, 59 * kMiB, kMaxGuardBytes, total) == 4 * kMiB);      // 5 MiB left: 2 granules
  CHECK(guard_size(8 * kMiB, kGran, 63 * kMiB, kMaxGuardBytes, total) == kGran);         // less than a granule left
  CHECK(guard_size(8 * kMiB, kGran, total, kMaxGuardBytes, total) == kGran);             // none left: still one
  CHECK(guard_size(8 * kMiB, kGran, 2 * total, kMaxGuardBytes, total) == kGran);         // over it: no wrap
  // A per-buffer bound that is not a whole number of granules is cut to granules.
  CHECK(guard_size(8 * kMiB, kGran, 0, 5 * kMiB, total) == 4 * kMiB);
  CHECK(guard_size(8 * kMiB, kGran, 0, kMiB, total) == kGran);
  // The bounds as chosen: 1 GiB per buffer, 16 TiB in all, both whole granules of any
  // power-of-two granule up to 1 GiB.
  static_assert(kMaxGuardBytes == 1ull << 30 && kMaxGuardTotalBytes == 16ull << 40);
  static_assert(kMaxGuardBytes % kGran == 0 && kMaxGuardTotalBytes % kMaxGuardBytes == 0);
}

TEST_CASE("scaled back fence: an access up to the buffer's size past its end lands in its guard", "[guard_layout]") {
  const std::uint64_t base = 0x7f0000000000;
  const std::uint64_t bytes = 4 * kMiB;
  const std::uint64_t mapped = mapped_size(bytes, kGran, 16);
  const std::uint64_t guard = guard_size(wanted_guard(mapped, kGran, GuardMode::scaled), kGran, 0);
  const Layout l = place(base, bytes, kGran, 16, Side::back, guard);
  CHECK(l.mapped_size == 4 * kMiB);
  CHECK(l.guard_size() == 4 * kMiB);
  CHECK(l.reserved_size == 8 * kMiB);
  CHECK(l.guard_begin == l.end());
  CHECK(l.guard_end == base + 8 * kMiB);
  // 1x the size past the end: the last byte of the guard; 1.9x would be beyond it.
  const Position far = locate(l, l.end() + bytes - 1);
  CHECK(far.where == Where::past_end);
  CHECK(far.distance == bytes);
  CHECK(far.in_guard);
  CHECK_FALSE(locate(l, l.end() + bytes).in_guard);
  // The ring-attention read: 2 to 4 MB past a 4 MB chunk, past a one-granule guard.
  CHECK(locate(l, l.end() + 3'000'000).in_guard);
  const Layout one = place(base, bytes, kGran, 16, Side::back, kGran);
  CHECK_FALSE(locate(one, one.end() + 3'000'000).in_guard);
}

TEST_CASE("scaled front fence: an access up to the buffer's size before its start lands in its guard",
          "[guard_layout]") {
  const std::uint64_t base = 0x7f0000000000;
  const std::uint64_t bytes = 3 * kMiB + 5;
  const std::uint64_t mapped = mapped_size(bytes, kGran, 16);
  const std::uint64_t guard = guard_size(wanted_guard(mapped, kGran, GuardMode::scaled), kGran, 0);
  const Layout l = place(base, bytes, kGran, 16, Side::front, guard);
  CHECK(guard == 4 * kMiB);
  CHECK(l.guard_begin == base);
  CHECK(l.guard_end == base + 4 * kMiB);
  CHECK(l.address == l.guard_end);
  CHECK(l.reserved_size == 8 * kMiB);
  const Position far = locate(l, l.address - bytes);
  CHECK(far.where == Where::before_start);
  CHECK(far.distance == bytes);
  CHECK(far.in_guard);
  CHECK(locate(l, base).in_guard);
  CHECK_FALSE(locate(l, base - 1).in_guard);
}

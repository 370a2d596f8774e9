#include <catch2/catch.hpp>

#include <vector>

#include "apps/interposer/recycle_bin.h"

using namespace cudadiag::interposer;
using cudadiag::fence::Side;

namespace {

std::vector<std::uint64_t> g_unmapped;  // handles of the buffers that left the bin
std::vector<std::uint64_t> g_reuse_limits;

void note_unmap(const DriverCalls&, const RecycleBin::Buffer& b, std::uint64_t reuse_limit) {
  g_unmapped.push_back(b.handle);
  g_reuse_limits.push_back(reuse_limit);
}

// A buffer with a guard of one 2 MiB granule, or of `guard` bytes.
RecycleBin::Buffer buffer(std::int32_t device, Side side, std::uint64_t mapped, std::uint64_t handle,
                          std::uint64_t guard = 2u << 20) {
  const std::uint64_t base = handle << 32;
  return RecycleBin::Buffer{device, side, base, mapped + guard, base, mapped, handle};
}

}  // namespace

TEST_CASE("recycle bin: a buffer serves exactly its device, side and mapped size, newest first", "[recycle_bin]") {
  g_unmapped.clear();
  RecycleBin bin(&note_unmap);
  const DriverCalls d;
  bin.keep(d, buffer(0, Side::back, 2 << 20, 1), 64 << 20, 0, nullptr);
  bin.keep(d, buffer(0, Side::back, 2 << 20, 2), 64 << 20, 0, nullptr);
  bin.keep(d, buffer(1, Side::back, 2 << 20, 3), 64 << 20, 0, nullptr);
  bin.keep(d, buffer(0, Side::front, 2 << 20, 4), 64 << 20, 0, nullptr);
  bin.keep(d, buffer(0, Side::back, 4 << 20, 5), 64 << 20, 0, nullptr);
  CHECK(bin.bytes() == 12u << 20);
  CHECK(g_unmapped.empty());
  RecycleBin::Buffer b;
  CHECK_FALSE(bin.take(0, Side::back, 6 << 20, 2 << 20, b));  // no buffer of that size
  CHECK_FALSE(bin.take(2, Side::back, 2 << 20, 2 << 20, b));  // nor on that device
  REQUIRE(bin.take(0, Side::back, 2 << 20, 2 << 20, b));
  CHECK(b.handle == 2);                              // the newest
  CHECK(b.reserved_begin == 2ull << 32);             // the whole buffer comes back
  CHECK(b.mapped_size == 2u << 20);
  REQUIRE(bin.take(0, Side::back, 2 << 20, 2 << 20, b));
  CHECK(b.handle == 1);
  CHECK_FALSE(bin.take(0, Side::back, 2 << 20, 2 << 20, b));  // taken buffers are gone
  REQUIRE(bin.take(0, Side::front, 2 << 20, 2 << 20, b));     // the side is part of the key
  CHECK(b.handle == 4);
  CHECK(bin.bytes() == 6u << 20);
  CHECK(bin.drain(d, 7, nullptr) == 2);
  CHECK(g_unmapped == std::vector<std::uint64_t>{3, 5});  // oldest first
  CHECK(g_reuse_limits == std::vector<std::uint64_t>{7, 7});
  CHECK(bin.bytes() == 0);
  CHECK_FALSE(bin.take(1, Side::back, 2 << 20, 2 << 20, b));
}

TEST_CASE("recycle bin: bounded in bytes, the oldest buffers are unmapped first", "[recycle_bin]") {
  g_unmapped.clear();
  RecycleBin bin(&note_unmap);
  const DriverCalls d;
  for (std::uint64_t h = 1; h <= 5; ++h) bin.keep(d, buffer(0, Side::back, 2 << 20, h), 6 << 20, 0, nullptr);
  CHECK(bin.bytes() == 6u << 20);
  CHECK(g_unmapped == std::vector<std::uint64_t>{1, 2});
  // A buffer larger than the bound is unmapped at once.
  bin.keep(d, buffer(0, Side::back, 8 << 20, 9), 6 << 20, 0, nullptr);
  CHECK(g_unmapped.back() == 9);
  CHECK(bin.bytes() == 6u << 20);
  // Taken out of the middle, then more kept: the holes never count, nor are they unmapped.
  RecycleBin::Buffer b;
  REQUIRE(bin.take(0, Side::back, 2 << 20, 2 << 20, b));
  CHECK(b.handle == 5);
  g_unmapped.clear();
  for (std::uint64_t h = 10; h < 1000; ++h) bin.keep(d, buffer(0, Side::back, 2 << 20, h), 6 << 20, 0, nullptr);
  CHECK(bin.bytes() == 6u << 20);
  REQUIRE(g_unmapped.size() == 2 + 990 - 3);
  CHECK(g_unmapped[0] == 3);
  CHECK(g_unmapped[1] == 4);
  CHECK(g_unmapped[2] == 10);
  for (std::uint64_t h = 999; h >= 997; --h) {
    REQUIRE(bin.take(0, Side::back, 2 << 20, 2 << 20, b));
    CHECK(b.handle == h);
  }
  CHECK(bin.bytes() == 0);
}

TEST_CASE("recycle bin: a limit of 0 keeps nothing", "[recycle_bin]") {
  g_unmapped.clear();
  RecycleBin bin(&note_unmap);
  const DriverCalls d;
  bin.keep(d, buffer(0, Side::back, 2 << 20, 1), 0, 0, nullptr);
  CHECK(g_unmapped == std::vector<std::uint64_t>{1});
  RecycleBin::Buffer b;
  CHECK_FALSE(bin.take(0, Side::back, 2 << 20, 2 << 20, b));
}

TEST_CASE("recycle bin: a buffer whose guard is smaller than a new one would get is not reused", "[recycle_bin]") {
  g_unmapped.clear();
  RecycleBin bin(&note_unmap);
  const DriverCalls d;
  bin.keep(d, buffer(0, Side::back, 4 << 20, 1, 2 << 20), 64 << 20, 0, nullptr);  // fell back to one granule
  bin.keep(d, buffer(0, Side::back, 4 << 20, 2, 4 << 20), 64 << 20, 0, nullptr);  // as large as its mapping
  bin.keep(d, buffer(0, Side::back, 4 << 20, 3, 2 << 20), 64 << 20, 0, nullptr);
  RecycleBin::Buffer b;
  // A new 4 MiB buffer would get 4 MiB of guard: only buffer 2 watches that far.
  REQUIRE(bin.take(0, Side::back, 4 << 20, 4 << 20, b));
  CHECK(b.handle == 2);
  CHECK(b.reserved_size - b.mapped_size == 4u << 20);
  CHECK_FALSE(bin.take(0, Side::back, 4 << 20, 4 << 20, b));
  // One granule asked (CUDADIAG_GUARD=granule, or the bound on all guards reached): the newest serves.
  REQUIRE(bin.take(0, Side::back, 4 << 20, 2 << 20, b));
  CHECK(b.handle == 3);
  CHECK(g_unmapped.empty());
}

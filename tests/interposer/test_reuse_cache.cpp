#include <catch2/catch.hpp>

#include <vector>

#include "apps/interposer/reuse_cache.h"

using namespace cudadiag::interposer;

namespace {

std::vector<std::uint64_t> g_released;

void note_release(const DriverCalls&, const ReuseCache::Item& item) { g_released.push_back(item.value); }

ReuseCache::Item item(std::int32_t device, std::uint64_t bytes, std::uint64_t value) {
  return ReuseCache::Item{device, bytes, value};
}

}  // namespace

TEST_CASE("reuse cache: an item serves exactly its device and size, newest first", "[reuse_cache]") {
  g_released.clear();
  ReuseCache cache(&note_release);
  const DriverCalls d;
  cache.keep(d, item(0, 2 << 20, 11), 64 << 20);
  cache.keep(d, item(0, 2 << 20, 12), 64 << 20);
  cache.keep(d, item(1, 2 << 20, 13), 64 << 20);
  cache.keep(d, item(0, 4 << 20, 14), 64 << 20);
  CHECK(cache.bytes() == 10u << 20);
  ReuseCache::Item v;
  CHECK_FALSE(cache.take(0, 6 << 20, v));   // no item of that size
  CHECK_FALSE(cache.take(2, 2 << 20, v));   // nor on that device
  REQUIRE(cache.take(0, 2 << 20, v));
  CHECK(v.value == 12);                     // the newest
  REQUIRE(cache.take(0, 2 << 20, v));
  CHECK(v.value == 11);
  CHECK_FALSE(cache.take(0, 2 << 20, v));   // taken items are gone
  REQUIRE(cache.take(1, 2 << 20, v));
  CHECK(v.value == 13);
  CHECK(cache.bytes() == 4u << 20);
  CHECK(g_released.empty());
}

TEST_CASE("reuse cache: beyond its byte limit the oldest items are released", "[reuse_cache]") {
  g_released.clear();
  ReuseCache cache(&note_release);
  const DriverCalls d;
  for (std::uint64_t i = 1; i <= 4; ++i) cache.keep(d, item(0, 2 << 20, i), 6 << 20);
  CHECK(g_released == std::vector<std::uint64_t>{1});
  CHECK(cache.bytes() == 6u << 20);
  // An item larger than the limit is released at once; the others stay.
  cache.keep(d, item(0, 8 << 20, 9), 6 << 20);
  CHECK(g_released == std::vector<std::uint64_t>{1, 9});
  // A limit of 0 keeps nothing: the new item goes at once, then the kept ones, oldest first.
  cache.keep(d, item(0, 2 << 20, 10), 0);
  CHECK(g_released == std::vector<std::uint64_t>{1, 9, 10, 2, 3, 4});
  CHECK(cache.bytes() == 0);
}

TEST_CASE("reuse cache: a full cache releases its oldest item; drain releases all", "[reuse_cache]") {
  g_released.clear();
  ReuseCache cache(&note_release);
  const DriverCalls d;
  for (std::uint64_t i = 0; i < ReuseCache::kCapacity + 2; ++i) cache.keep(d, item(0, 1, 100 + i), ~0ull);
  CHECK(g_released == std::vector<std::uint64_t>{100, 101});
  g_released.clear();
  CHECK(cache.drain(d) == ReuseCache::kCapacity);
  REQUIRE(g_released.size() == ReuseCache::kCapacity);
  CHECK(g_released.front() == 102);
  CHECK(cache.bytes() == 0);
  ReuseCache::Item v;
  CHECK_FALSE(cache.take(0, 1, v));
  CHECK(cache.drain(d) == 0);
}

TEST_CASE("reuse cache: an address range comes back with the guard its last buffer had", "[reuse_cache]") {
  g_released.clear();
  ReuseCache cache(&note_release);
  const DriverCalls d;
  cache.keep(d, ReuseCache::Item{0, 8 << 20, 0x7f0000000000, 4 << 20}, 64 << 20);
  ReuseCache::Item v;
  REQUIRE(cache.take(0, 8 << 20, v));
  CHECK(v.value == 0x7f0000000000);
  CHECK(v.bytes == 8u << 20);
  CHECK(v.guard == 4u << 20);
}

// The quarantine of freed fenced buffers: their ranges stay reserved (and tracked, so a
// second free is told apart) until more than the limit is held; then the oldest go first,
// at most 16 a free, to the kept ranges (fence_memory.h: give_back_range).
#include <catch2/catch.hpp>

#include <vector>

#include "apps/interposer/fence_memory.h"
#include "apps/interposer/quarantine.h"
#include "apps/interposer/reuse_cache.h"
#include "apps/interposer/tracked_ranges.h"
#include "fake_vmm.h"

using namespace cudadiag::interposer;
using cudadiag::test::fake_driver_calls;
using cudadiag::test::fake_vmm;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kBase = 0x500000000000ull;
constexpr std::uint64_t kBuffers = 1000;  // freed(n) for n below this

// A freed fenced buffer, the n-th: a mapping of `mapped` bytes and a guard as large, its
// reservation 1 GiB from the others, the pointer a granule into it.
Tracked freed(std::uint64_t n, std::uint64_t mapped = 2 * kMiB) {
  Tracked t;
  t.reserved_begin = kBase + n * (1ull << 30);
  t.mapped_begin = t.reserved_begin;
  t.mapped_size = mapped;
  t.reserved_size = 2 * mapped;
  t.address = t.reserved_begin + kMiB;
  t.bytes = 1000;
  t.kind = Tracked::Kind::fenced;
  return t;
}

// What tracked_ranges() says of the n-th buffer: "quarantined", "live" or "gone".
std::string state_of(std::uint64_t n) {
  Tracked t;
  if (!tracked_ranges().containing(freed(n).address, t)) return "gone";
  return t.kind == Tracked::Kind::quarantined ? "quarantined" : "live";
}

// The reservations given back, oldest first (kept ranges are taken newest first).
std::vector<std::uint64_t> given_back(std::uint64_t reserved = 4 * kMiB) {
  std::vector<std::uint64_t> out;
  for (ReuseCache::Item v; kept_ranges().take(0, reserved, v);) out.insert(out.begin(), v.value);
  return out;
}

struct Clean {
  Clean() { clear(); }
  ~Clean() { clear(); }
  static void clear() {
    for (std::uint64_t n = 0; n < kBuffers; ++n) tracked_ranges().remove(freed(n).address);
    kept_ranges().drain(fake_driver_calls());
    fake_vmm().reset();
  }
};

}  // namespace

TEST_CASE("quarantine: a freed buffer stays reserved and tracked while under the limit", "[quarantine]") {
  Clean clean;
  Quarantine q;
  q.admit(fake_driver_calls(), freed(0), 10 * kMiB, nullptr);
  CHECK(state_of(0) == "quarantined");
  // A second free of it is told apart from a pointer never seen.
  Tracked t;
  bool quarantined = false;
  CHECK_FALSE(tracked_ranges().take_live(freed(0).address, t, quarantined));
  CHECK(quarantined);
  CHECK(kept_ranges().bytes() == 0);
  CHECK(fake_vmm().calls.empty());  // the range is neither freed nor kept
}

TEST_CASE("quarantine: beyond the limit the oldest reservations go first", "[quarantine]") {
  Clean clean;
  Quarantine q;
  // 2 MiB each, limit 5 MiB: two fit, the third pushes out the first.
  q.admit(fake_driver_calls(), freed(0), 5 * kMiB, nullptr);
  q.admit(fake_driver_calls(), freed(1), 5 * kMiB, nullptr);
  CHECK(given_back().empty());
  q.admit(fake_driver_calls(), freed(2), 5 * kMiB, nullptr);
  CHECK(state_of(0) == "gone");
  CHECK(state_of(1) == "quarantined");
  CHECK(state_of(2) == "quarantined");
  CHECK(given_back() == std::vector<std::uint64_t>{freed(0).reserved_begin});

  // Exactly at the limit is within it.
  q.admit(fake_driver_calls(), freed(3, kMiB), 5 * kMiB, nullptr);
  CHECK(state_of(1) == "quarantined");
  CHECK(given_back().empty());

  // One large buffer pushes out as many old ones as it takes, oldest first.
  q.admit(fake_driver_calls(), freed(4, 4 * kMiB), 5 * kMiB, nullptr);
  CHECK(state_of(1) == "gone");
  CHECK(state_of(2) == "gone");
  CHECK(state_of(3) == "quarantined");
  CHECK(state_of(4) == "quarantined");
  CHECK(given_back() == std::vector<std::uint64_t>{freed(1).reserved_begin, freed(2).reserved_begin});
}

TEST_CASE("quarantine: the limit counts the freed buffers' mappings, not their guards", "[quarantine]") {
  Clean clean;
  Quarantine q;
  // Two 2 MiB buffers hold 8 MiB of address space with their guards, 4 MiB of mappings.
  q.admit(fake_driver_calls(), freed(0), 4 * kMiB, nullptr);
  q.admit(fake_driver_calls(), freed(1), 4 * kMiB, nullptr);
  CHECK(state_of(0) == "quarantined");
  CHECK(state_of(1) == "quarantined");
  CHECK(given_back().empty());
  q.admit(fake_driver_calls(), freed(2), 4 * kMiB, nullptr);
  CHECK(state_of(0) == "gone");
  CHECK(given_back() == std::vector<std::uint64_t>{freed(0).reserved_begin});
}

TEST_CASE("quarantine: a limit of 0 gives every range back at its free, itself included", "[quarantine]") {
  Clean clean;
  Quarantine q;
  q.admit(fake_driver_calls(), freed(0), 64 * kMiB, nullptr);
  q.admit(fake_driver_calls(), freed(1), 64 * kMiB, nullptr);
  q.admit(fake_driver_calls(), freed(2), 0, nullptr);
  for (std::uint64_t n : {0, 1, 2}) CHECK(state_of(n) == "gone");
  CHECK(given_back() ==
        std::vector<std::uint64_t>{freed(0).reserved_begin, freed(1).reserved_begin, freed(2).reserved_begin});
}

TEST_CASE("quarantine: one free gives back at most 16 reservations; later frees the rest", "[quarantine]") {
  Clean clean;
  Quarantine q;
  for (std::uint64_t n = 0; n < 20; ++n) q.admit(fake_driver_calls(), freed(n), 1ull << 40, nullptr);
  q.admit(fake_driver_calls(), freed(20), 0, nullptr);
  std::vector<std::uint64_t> want;
  for (std::uint64_t n = 0; n < 16; ++n) want.push_back(freed(n).reserved_begin);
  CHECK(given_back() == want);
  for (std::uint64_t n = 16; n <= 20; ++n) CHECK(state_of(n) == "quarantined");
  q.admit(fake_driver_calls(), freed(21), 0, nullptr);
  want.clear();
  for (std::uint64_t n = 16; n <= 21; ++n) want.push_back(freed(n).reserved_begin);
  CHECK(given_back() == want);
  for (std::uint64_t n = 0; n <= 21; ++n) CHECK(state_of(n) == "gone");
}

TEST_CASE("quarantine: first in, first out across the FIFO's wrap-around and growth", "[quarantine]") {
  Clean clean;
  Quarantine q;
  std::vector<std::uint64_t> released;
  const auto admit = [&](std::uint64_t n, std::uint64_t limit) {
    q.admit(fake_driver_calls(), freed(n), limit, nullptr);
    const auto back = given_back();
    released.insert(released.end(), back.begin(), back.end());
  };
  constexpr std::uint64_t kHundred = 100 * 2 * kMiB;  // a limit of 100 buffers
  // 100 held while 300 pass: the FIFO's head goes round its first 256 entries.
  for (std::uint64_t n = 0; n < 300; ++n) admit(n, kHundred);
  // No limit: it grows to 400 entries with its head in the middle.
  for (std::uint64_t n = 300; n < 600; ++n) admit(n, 1ull << 40);
  CHECK(released.size() == 200);
  // Back to 100: the frees give back 16 each until 100 are left, then one each.
  for (std::uint64_t n = 600; n < kBuffers; ++n) admit(n, kHundred);
  REQUIRE(released.size() == kBuffers - 100);
  for (std::uint64_t n = 0; n < released.size(); ++n)
    if (released[n] != freed(n).reserved_begin) FAIL("the " << n << "th range given back is not the " << n << "th freed");
  CHECK(state_of(kBuffers - 101) == "gone");
  for (std::uint64_t n = kBuffers - 100; n < kBuffers; ++n)
    if (state_of(n) != "quarantined") FAIL("buffer " << n << " is " << state_of(n));
}

// map_fenced / unmap_fenced on the in-memory driver of fake_vmm.h: where a buffer lands
// against its guard, what it costs the driver, what goes back when a step fails, and the
// reuse of freed memory, ranges and mappings.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "apps/interposer/fence_memory.h"
#include "apps/interposer/guard_budget.h"
#include "apps/interposer/peer_access.h"
#include "apps/interposer/recycle_bin.h"
#include "apps/interposer/reuse_cache.h"
#include "fake_vmm.h"

using namespace cudadiag::interposer;
using cudadiag::fence::GuardMode;
using cudadiag::fence::Side;
using cudadiag::test::fake_driver_calls;
using cudadiag::test::fake_vmm;
using cudadiag::test::FakeVmm;

namespace {

constexpr std::uint64_t kGran = FakeVmm::kGranule;
constexpr std::uint64_t kSmall = FakeVmm::kSmallGranule;
constexpr std::uint64_t kPlenty = 1ull << 30;

// The process-wide caches start and end empty, and the driver's log with them.
struct CleanDriver {
  CleanDriver() { clear(); }
  ~CleanDriver() { clear(); }
  static void clear() {
    release_kept_memory(fake_driver_calls());
    kept_ranges().drain(fake_driver_calls());
    fake_vmm().reset();
  }
};

// Device 1 may use device 0's memory (cuCtxEnablePeerAccess made on device 1) for a scope.
struct PeerEnabled {
  PeerEnabled() { set_peer_access(1, 0, true); }
  ~PeerEnabled() { set_peer_access(1, 0, false); }
};

struct Mapped {
  bool ok = false;
  FencedMemory m;
  FenceFailure why;
};

Mapped map(int device, std::uint64_t bytes, std::uint64_t align, Side side, GuardMode mode = GuardMode::scaled) {
  Mapped r;
  r.ok = map_fenced(fake_driver_calls(), device, bytes, align, side, mode, r.m, r.why);
  return r;
}

// Unmaps a buffer and gives its range back, as a free whose quarantine let go does.
void free_fenced(const Mapped& r) {
  const auto& l = r.m.layout;
  REQUIRE(unmap_fenced(fake_driver_calls(), 0, l.mapped_begin, l.mapped_size, r.m.handle, kPlenty) == CUDA_SUCCESS);
  give_back_range(fake_driver_calls(), l.reserved_begin, l.reserved_size, l.guard_size());
}

// The process's guard bounds for one test, put back after it.
struct GuardBounds {
  GuardBounds(std::uint64_t per_buffer, std::uint64_t total) { guard_budget().set_bounds(per_buffer, total); }
  ~GuardBounds() {
    guard_budget().set_bounds(cudadiag::fence::kMaxGuardBytes, cudadiag::fence::kMaxGuardTotalBytes);
  }
};

}  // namespace

TEST_CASE("fence memory: a back-fenced buffer ends flush against its guard", "[fence_memory]") {
  CleanDriver clean;
  const auto r = map(0, 1000, 1, Side::back);
  REQUIRE(r.ok);
  const auto& l = r.m.layout;
  CHECK(r.m.granularity == kGran);
  CHECK(l.mapped_begin == l.reserved_begin);
  CHECK(l.mapped_size == kGran);  // 1000 bytes: one whole granule
  CHECK(l.reserved_size == 2 * kGran);  // and one guard granule
  CHECK(l.guard_begin == l.reserved_begin + kGran);
  CHECK(l.guard_end == l.reserved_begin + 2 * kGran);
  CHECK(l.address == l.guard_begin - 1000);  // the last byte touches the guard
  CHECK(l.end() == l.guard_begin);
  CHECK(l.slack == 0);
  CHECK(l.bytes == 1000);

  // What the driver was asked: the reservation, memory of the mapped size, mapped at
  // the reservation's start (the guard stays unmapped), readable by the device alone (its
  // peer, device 1, never enabled peer access).
  const auto& vmm = fake_vmm();
  REQUIRE(vmm.calls.size() == 4);
  CHECK(vmm.calls[0].name == "reserve");
  CHECK(vmm.calls[0].value == l.reserved_begin);
  CHECK(vmm.calls[0].size == 2 * kGran);
  CHECK(vmm.calls[1].name == "create");
  CHECK(vmm.calls[1].size == kGran);
  CHECK_FALSE(vmm.calls[1].rdma);
  CHECK(vmm.calls[1].value == r.m.handle);
  CHECK(vmm.calls[2].name == "map");
  CHECK(vmm.calls[2].value == l.mapped_begin);
  CHECK(vmm.calls[2].size == kGran);
  CHECK(vmm.calls[2].count == r.m.handle);
  CHECK(vmm.calls[3].name == "set_access");
  CHECK(vmm.calls[3].value == l.mapped_begin);
  CHECK(vmm.calls[3].size == kGran);
  CHECK(vmm.calls[3].count == 1);
  CHECK_FALSE(r.m.handle_reused);
  CHECK_FALSE(r.m.range_reused);
  CHECK_FALSE(r.m.recycled);
}

TEST_CASE("fence memory: a peer reaches a buffer only after the program enabled peer access", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  REQUIRE(map(0, 1000, 1, Side::back).ok);
  REQUIRE(vmm.of("set_access").size() == 1);
  CHECK(vmm.of("set_access")[0].count == 1);  // device 0 alone
  {
    PeerEnabled enabled;
    CHECK(peer_access_enabled(1, 0));
    CHECK_FALSE(peer_access_enabled(0, 1));  // one direction only, as the driver's
    REQUIRE(map(0, 1000, 1, Side::back).ok);
    REQUIRE(vmm.of("set_access").size() == 2);
    CHECK(vmm.of("set_access")[1].count == 2);  // device 0 and its peer, device 1
    // Device 1's own buffers: device 0 enabled nothing.
    REQUIRE(map(1, 1000, 1, Side::back).ok);
    REQUIRE(vmm.of("set_access").size() == 3);
    CHECK(vmm.of("set_access")[2].count == 1);
  }
  REQUIRE(map(0, 1000, 1, Side::back).ok);
  CHECK(vmm.of("set_access").back().count == 1);  // disabled again
  // Granted and taken away on a mapping that exists.
  CHECK(set_peer_mapping_access(fake_driver_calls(), 0x7f0000000000ull, kGran, 1, true) == CUDA_SUCCESS);
  CHECK(vmm.of("set_access").back().count == 1);
  CHECK(vmm.of("set_access").back().value == 0x7f0000000000ull);
  CHECK_FALSE(set_peer_access(0, 0, true));   // a device's own memory needs no peer access
  CHECK_FALSE(set_peer_access(64, 0, true));  // out of range
}

TEST_CASE("fence memory: a buffer placed while peer access changed gets what is enabled now", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  const std::uint64_t before = peer_access_generation();
  const auto r = map(0, 1000, 1, Side::back);
  REQUIRE(r.ok);
  CHECK(r.m.access_generation == before);
  PeerEnabled enabled;
  CHECK(peer_access_generation() != r.m.access_generation);
  refresh_peer_access(fake_driver_calls(), 0, r.m.layout.mapped_begin, r.m.layout.mapped_size);
  const auto access = vmm.of("set_access");
  REQUIRE(access.size() == 2);  // placed, then device 1 granted
  CHECK(access[1].value == r.m.layout.mapped_begin);
  CHECK(access[1].size == r.m.layout.mapped_size);
  CHECK(access[1].count == 1);
}

TEST_CASE("fence memory: the aligned block ends at the guard; the rest is slack", "[fence_memory]") {
  CleanDriver clean;
  const auto r = map(0, 1000, 256, Side::back);
  REQUIRE(r.ok);
  const auto& l = r.m.layout;
  CHECK(l.address == l.guard_begin - 1024);  // 1000 rounded up to 256
  CHECK(l.address % 256 == 0);
  CHECK(l.slack == 24);
  CHECK(l.end() + l.slack == l.guard_begin);
}

TEST_CASE("fence memory: a front-fenced buffer starts right after its guard", "[fence_memory]") {
  CleanDriver clean;
  const auto r = map(0, 1000, 256, Side::front);
  REQUIRE(r.ok);
  const auto& l = r.m.layout;
  CHECK(l.guard_begin == l.reserved_begin);
  CHECK(l.guard_end == l.reserved_begin + kGran);
  CHECK(l.mapped_begin == l.guard_end);
  CHECK(l.address == l.guard_end);  // the byte before the first one is the guard's
  CHECK(l.mapped_size == kGran);
  CHECK(l.reserved_size == 2 * kGran);
  CHECK(l.slack == 0);
  const auto maps = fake_vmm().of("map");
  REQUIRE(maps.size() == 1);
  CHECK(maps[0].value == l.reserved_begin + kGran);  // the guard at the front is never mapped
}

TEST_CASE("fence memory: requests are rounded to whole granules of their device", "[fence_memory]") {
  CleanDriver clean;
  SECTION("one byte past a granule maps two") {
    const auto r = map(2, kSmall + 1, 1, Side::back);
    REQUIRE(r.ok);
    CHECK(r.m.granularity == kSmall);
    CHECK(r.m.layout.mapped_size == 2 * kSmall);
    CHECK(r.m.layout.reserved_size == 4 * kSmall);  // and a guard as large
    CHECK(r.m.layout.end() == r.m.layout.guard_begin);
    CHECK(r.m.layout.address == r.m.layout.mapped_begin + kSmall - 1);
  }
  SECTION("exactly a granule maps one, with no slack") {
    const auto r = map(2, kSmall, 256, Side::back);
    REQUIRE(r.ok);
    CHECK(r.m.layout.mapped_size == kSmall);
    CHECK(r.m.layout.address == r.m.layout.mapped_begin);
    CHECK(r.m.layout.slack == 0);
  }
  SECTION("zero bytes still map a granule, the pointer at the guard") {
    const auto r = map(2, 0, 256, Side::back);
    REQUIRE(r.ok);
    CHECK(r.m.layout.mapped_size == kSmall);
    CHECK(r.m.layout.address == r.m.layout.guard_begin);
  }
  SECTION("an alignment above the granule is held to the granule") {
    const auto r = map(2, 100000, 4ull << 20, Side::back);
    REQUIRE(r.ok);
    CHECK(r.m.layout.mapped_size == 2 * kSmall);  // 100000 rounded to 64 KiB, not to 4 MiB
    CHECK(r.m.layout.address == r.m.layout.mapped_begin);
    CHECK(r.m.layout.slack == 2 * kSmall - 100000);
    CHECK(fake_vmm().of("reserve").at(0).size == 4 * kSmall);
  }
}

TEST_CASE("fence memory: a device the driver cannot fence on is refused before any call", "[fence_memory]") {
  CleanDriver clean;
  SECTION("no such device") {
    for (int device : {-1, 64}) {
      const auto r = map(device, 1000, 1, Side::back);
      CHECK_FALSE(r.ok);
      CHECK(r.why.call == cudadiag::ring::VmmCall::granularity);
      CHECK(r.why.result == CUDA_ERROR_INVALID_DEVICE);
    }
  }
  SECTION("a granule of 0") {
    const auto r = map(4, 1000, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.call == cudadiag::ring::VmmCall::granularity);
    CHECK(r.why.result == CUDA_ERROR_NOT_SUPPORTED);
  }
  SECTION("the granularity call fails: its error") {
    const auto r = map(5, 1000, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.call == cudadiag::ring::VmmCall::granularity);
    CHECK(r.why.result == CUDA_ERROR_NOT_PERMITTED);
  }
  SECTION("a request whose rounding would wrap") {
    const auto r = map(0, ~0ull - kGran, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.call == cudadiag::ring::VmmCall::reserve);
    CHECK(r.why.result == CUDA_ERROR_OUT_OF_MEMORY);
  }
  CHECK(fake_vmm().calls.empty());
}

TEST_CASE("fence memory: a failed step gives back everything the earlier ones took", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  SECTION("reserve") {
    vmm.failures = {{"reserve", CUDA_ERROR_OUT_OF_MEMORY}};
    const auto r = map(0, 1000, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.call == cudadiag::ring::VmmCall::reserve);
    CHECK(r.why.result == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(vmm.calls.size() == 1);
  }
  SECTION("create") {
    vmm.failures = {{"create", CUDA_ERROR_INVALID_VALUE}};
    const auto r = map(0, 1000, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.call == cudadiag::ring::VmmCall::create);
    CHECK(r.why.result == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(vmm.of("free").size() == 1);
    CHECK(vmm.of("free")[0].value == vmm.of("reserve").at(0).value);
    CHECK(vmm.of("free")[0].size == 2 * kGran);
    CHECK(vmm.of("map").empty());
  }
  SECTION("map") {
    vmm.failures = {{"map", CUDA_ERROR_INVALID_VALUE}};
    const auto r = map(0, 1000, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.call == cudadiag::ring::VmmCall::map);
    REQUIRE(vmm.of("release").size() == 1);
    CHECK(vmm.of("release")[0].value == vmm.of("create").at(0).value);
    CHECK(vmm.of("free").size() == 1);
    CHECK(vmm.of("set_access").empty());
  }
  SECTION("set_access, with the peers and then alone") {
    PeerEnabled enabled;
    vmm.failures = {{"set_access", CUDA_ERROR_INVALID_VALUE}, {"set_access", CUDA_ERROR_INVALID_DEVICE}};
    const auto r = map(0, 1000, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.call == cudadiag::ring::VmmCall::set_access);
    CHECK(r.why.result == CUDA_ERROR_INVALID_DEVICE);
    const auto access = vmm.of("set_access");
    REQUIRE(access.size() == 2);
    CHECK(access[0].count == 2);
    CHECK(access[1].count == 1);  // the device alone
    CHECK(vmm.of("unmap").size() == 1);
    CHECK(vmm.of("release").size() == 1);
    CHECK(vmm.of("free").size() == 1);
  }
  SECTION("set_access for the peers only: the device alone is enough") {
    PeerEnabled enabled;
    vmm.failures = {{"set_access", CUDA_ERROR_INVALID_VALUE}};
    const auto r = map(0, 1000, 1, Side::back);
    CHECK(r.ok);
    CHECK(vmm.of("set_access").size() == 2);
    CHECK(vmm.of("unmap").empty());
  }
}

TEST_CASE("fence memory: RDMA-capable memory where the device has it, plain memory if refused", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  vmm.failures = {{"create", CUDA_ERROR_NOT_SUPPORTED}};
  const auto r = map(1, 1000, 1, Side::back);
  REQUIRE(r.ok);
  const auto creates = vmm.of("create");
  REQUIRE(creates.size() == 2);
  CHECK(creates[0].rdma);
  CHECK_FALSE(creates[1].rdma);
  CHECK(r.m.handle == creates[1].value);
}

TEST_CASE("fence memory: out of memory gives the kept memory back and asks once more", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  SECTION("nothing kept: the failure stands") {
    vmm.failures = {{"create", CUDA_ERROR_OUT_OF_MEMORY}};
    const auto r = map(0, 1000, 1, Side::back);
    CHECK_FALSE(r.ok);
    CHECK(r.why.result == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(vmm.of("create").size() == 1);
  }
  SECTION("memory of another size kept: released, then the second ask succeeds") {
    const auto big = map(0, 3 * kGran, 1, Side::back);
    REQUIRE(big.ok);
    REQUIRE(unmap_fenced(fake_driver_calls(), 0, big.m.layout.mapped_begin, big.m.layout.mapped_size, big.m.handle,
                         kPlenty) == CUDA_SUCCESS);
    vmm.reset();
    vmm.failures = {{"create", CUDA_ERROR_OUT_OF_MEMORY}};
    const auto r = map(0, 1000, 1, Side::back);
    REQUIRE(r.ok);
    REQUIRE(vmm.of("release").size() == 1);
    CHECK(vmm.of("release")[0].value == big.m.handle);
    CHECK(vmm.of("create").size() == 2);
    CHECK(r.m.handle != big.m.handle);
  }
}

TEST_CASE("fence memory: freed memory and released ranges serve the next buffer of their size", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  const auto first = map(0, 1000, 1, Side::back);
  REQUIRE(first.ok);
  const auto& fl = first.m.layout;
  REQUIRE(unmap_fenced(fake_driver_calls(), 0, fl.mapped_begin, fl.mapped_size, first.m.handle, kPlenty) ==
          CUDA_SUCCESS);
  vmm.reset();

  // The range stays reserved (quarantined): new address space, the freed memory.
  const auto second = map(0, 2000, 1, Side::back);
  REQUIRE(second.ok);
  CHECK(second.m.handle_reused);
  CHECK(second.m.handle == first.m.handle);
  CHECK_FALSE(second.m.range_reused);
  CHECK(second.m.layout.reserved_begin != fl.reserved_begin);
  CHECK(vmm.of("create").empty());
  CHECK(vmm.of("reserve").size() == 1);

  // The range let go: the next buffer of its size is placed in it, without a reservation.
  give_back_range(fake_driver_calls(), fl.reserved_begin, fl.reserved_size, fl.guard_size());
  vmm.reset();
  const auto third = map(0, 3000, 1, Side::back);
  REQUIRE(third.ok);
  CHECK(third.m.range_reused);
  CHECK(third.m.layout.reserved_begin == fl.reserved_begin);
  CHECK(third.m.layout.end() == fl.guard_begin);
  CHECK(vmm.of("reserve").empty());
  CHECK_FALSE(third.m.handle_reused);  // the only kept memory went to the second buffer
}

TEST_CASE("fence memory: memory whose unmap failed is released, never reused", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  const auto first = map(0, 1000, 1, Side::back);
  REQUIRE(first.ok);
  vmm.reset();
  vmm.failures = {{"unmap", CUDA_ERROR_ILLEGAL_STATE}};
  CHECK(unmap_fenced(fake_driver_calls(), 0, first.m.layout.mapped_begin, first.m.layout.mapped_size, first.m.handle,
                     kPlenty) == CUDA_ERROR_ILLEGAL_STATE);
  REQUIRE(vmm.of("release").size() == 1);
  CHECK(vmm.of("release")[0].value == first.m.handle);
  const auto second = map(0, 1000, 1, Side::back);
  REQUIRE(second.ok);
  CHECK_FALSE(second.m.handle_reused);
  CHECK(second.m.handle != first.m.handle);
}

TEST_CASE("fence memory: a recycled buffer is placed again against the same guard, no driver call", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  const auto first = map(0, 1000, 1, Side::back);
  REQUIRE(first.ok);
  const auto& fl = first.m.layout;
  recycle_bin().keep(fake_driver_calls(),
                     RecycleBin::Buffer{0, Side::back, fl.reserved_begin, fl.reserved_size, fl.mapped_begin,
                                        fl.mapped_size, first.m.handle},
                     kPlenty, kPlenty, nullptr);
  vmm.reset();
  CHECK_FALSE(map(0, 1000, 1, Side::front).m.recycled);  // the side is part of the key
  vmm.reset();
  const auto again = map(0, 2000, 16, Side::back);
  REQUIRE(again.ok);
  CHECK(again.m.recycled);
  CHECK(again.m.handle == first.m.handle);
  CHECK(again.m.layout.mapped_begin == fl.mapped_begin);
  CHECK(again.m.layout.address == fl.guard_begin - 2000);
  CHECK(again.m.layout.guard_begin == fl.guard_begin);
  CHECK(vmm.calls.empty());
}

TEST_CASE("fence memory: a recycled buffer that does not place as mapped stops the process, saying so",
          "[fence_memory]") {
  CleanDriver clean;
  // Mapped one granule at the reservation's second one: not where map_fenced maps a
  // back-fenced buffer.
  const std::uint64_t base = 0x7e0000000000ull;
  int err[2];
  REQUIRE(pipe(err) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGABRT, SIG_DFL);  // the abort itself, not Catch's report of it
    dup2(err[1], STDERR_FILENO);
    recycle_bin().keep(fake_driver_calls(), RecycleBin::Buffer{0, Side::back, base, 3 * kGran, base + kGran, kGran, 77},
                       kPlenty, kPlenty, nullptr);
    FencedMemory m;
    FenceFailure why;
    map_fenced(fake_driver_calls(), 0, 1000, 1, Side::back, GuardMode::scaled, m, why);
    _exit(0);  // went on: the test fails below
  }
  close(err[1]);
  std::string said;
  char buf[512];
  for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(n));
  close(err[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  INFO(said);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK(said.rfind("cudadiag-fence[" + std::to_string(child) + "]: internal error: the recycle bin gave a buffer "
                   "mapped at 0x7e0000200000 (reservation 0x7e0000000000, 6291456 bytes) for 1000 bytes on device 0, "
                   "which place at 0x7e0000000000 (reservation 6291456 bytes; granule 2097152, alignment 1)\n",
                   0) == 0);
}

TEST_CASE("fence memory: a buffer's guard is as large as the buffer: the size past its end is reserved, never mapped",
          "[fence_memory]") {
  CleanDriver clean;
  const auto& vmm = fake_vmm();
  const std::uint64_t size = 4ull << 20;  // two granules
  const auto r = map(0, size, 16, Side::back);
  REQUIRE(r.ok);
  const auto& l = r.m.layout;
  CHECK(r.m.guard_wanted == size);
  CHECK_FALSE(r.m.guard_cut);
  CHECK(l.guard_size() == size);
  CHECK(l.reserved_size == 2 * size);
  CHECK(vmm.of("reserve").at(0).size == 2 * size);
  // The buffer is mapped to its last byte; every byte up to its own size past the end is
  // reserved and unmapped, so a read there faults instead of reaching the next reservation.
  CHECK(vmm.is_mapped(l.address));
  CHECK(vmm.is_mapped(l.end() - 1));
  for (const std::uint64_t past : {std::uint64_t{0}, std::uint64_t{1}, kGran, kGran + 12345, size / 4 * 3, size - 1}) {
    INFO("offset past the end: " << past);
    CHECK(vmm.is_reserved(l.end() + past));
    CHECK_FALSE(vmm.is_mapped(l.end() + past));
  }
  CHECK_FALSE(vmm.is_reserved(l.end() + size));  // beyond the guard: not this reservation's
  free_fenced(r);
}

TEST_CASE("fence memory: a front-fenced buffer's guard covers its own size before its start", "[fence_memory]") {
  CleanDriver clean;
  const auto& vmm = fake_vmm();
  const std::uint64_t size = 3 * kGran - 100;
  const auto r = map(0, size, 16, Side::front);
  REQUIRE(r.ok);
  const auto& l = r.m.layout;
  CHECK(l.guard_size() == 3 * kGran);
  CHECK(l.address == l.reserved_begin + 3 * kGran);
  for (const std::uint64_t before : {std::uint64_t{1}, kGran, size}) {
    INFO("bytes before the start: " << before);
    CHECK(vmm.is_reserved(l.address - before));
    CHECK_FALSE(vmm.is_mapped(l.address - before));
  }
  CHECK(vmm.is_mapped(l.address));
  free_fenced(r);
}

TEST_CASE("fence memory: CUDADIAG_GUARD=granule gives one granule whatever the size", "[fence_memory]") {
  CleanDriver clean;
  const auto& vmm = fake_vmm();
  const std::uint64_t size = 8ull << 20;
  const auto r = map(0, size, 16, Side::back, GuardMode::granule);
  REQUIRE(r.ok);
  const auto& l = r.m.layout;
  CHECK(r.m.guard_wanted == kGran);
  CHECK_FALSE(r.m.guard_cut);
  CHECK(l.guard_size() == kGran);
  CHECK(l.reserved_size == size + kGran);
  CHECK(vmm.of("reserve").at(0).size == size + kGran);
  CHECK_FALSE(vmm.is_mapped(l.end() + kGran - 1));
  CHECK_FALSE(vmm.is_reserved(l.end() + kGran));  // a read one granule on is not watched
  free_fenced(r);
}

TEST_CASE("fence memory: the bounds on guards give the largest guard that fits, down to one granule",
          "[fence_memory]") {
  CleanDriver clean;
  const std::uint64_t held = guard_budget().held();  // other tests' live buffers
  SECTION("one buffer's guard is at most the per-buffer bound") {
    GuardBounds bounds(4 * kGran, held + (1ull << 40));
    const auto r = map(0, 16 * kGran, 16, Side::back);
    REQUIRE(r.ok);
    CHECK(r.m.guard_wanted == 16 * kGran);
    CHECK(r.m.layout.guard_size() == 4 * kGran);
    CHECK_FALSE(r.m.guard_cut);  // the per-buffer bound is no cut: the coverage states it
    CHECK(guard_budget().held() == held + 4 * kGran);
    free_fenced(r);
  }
  SECTION("all guards together stay within the total bound") {
    GuardBounds bounds(1ull << 30, held + 5 * kGran);
    const auto a = map(0, 4 * kGran, 16, Side::back);
    REQUIRE(a.ok);
    CHECK(a.m.layout.guard_size() == 4 * kGran);
    CHECK_FALSE(a.m.guard_cut);
    const auto b = map(0, 4 * kGran, 16, Side::back);  // one granule left
    REQUIRE(b.ok);
    CHECK(b.m.layout.guard_size() == kGran);
    CHECK(b.m.guard_cut);
    const auto c = map(0, 4 * kGran, 16, Side::back);  // none left: still one granule
    REQUIRE(c.ok);
    CHECK(c.m.layout.guard_size() == kGran);
    CHECK(c.m.guard_cut);
    CHECK(fake_vmm().is_reserved(c.m.layout.guard_begin));
    CHECK_FALSE(fake_vmm().is_mapped(c.m.layout.guard_begin));
    CHECK(guard_budget().held() == held + 6 * kGran);
    // Freed and their ranges freed, the guards leave the budget: a new buffer gets its full guard.
    free_fenced(a);
    free_fenced(b);
    free_fenced(c);
    kept_ranges().drain(fake_driver_calls());
    CHECK(guard_budget().held() == held);
    const auto d = map(0, 4 * kGran, 16, Side::back);
    REQUIRE(d.ok);
    CHECK(d.m.layout.guard_size() == 4 * kGran);
    free_fenced(d);
  }
  kept_ranges().drain(fake_driver_calls());
  CHECK(guard_budget().held() == held);
}

TEST_CASE("fence memory: a scaled guard's reservation refused falls back to one granule", "[fence_memory]") {
  CleanDriver clean;
  auto& vmm = fake_vmm();
  vmm.failures = {{"reserve", CUDA_ERROR_OUT_OF_MEMORY}};
  const auto r = map(0, 4 * kGran, 16, Side::back);
  REQUIRE(r.ok);
  CHECK(r.m.layout.guard_size() == kGran);
  CHECK(r.m.guard_cut);
  const auto reserves = vmm.of("reserve");
  REQUIRE(reserves.size() == 2);
  CHECK(reserves[0].size == 8 * kGran);
  CHECK(reserves[1].size == 5 * kGran);
  free_fenced(r);
}

TEST_CASE("fence memory: a kept range serves a buffer whose mapping and guard fill it exactly", "[fence_memory]") {
  CleanDriver clean;
  const std::uint64_t held = guard_budget().held();
  const auto a = map(0, 2 * kGran, 16, Side::back);
  REQUIRE(a.ok);
  free_fenced(a);
  CHECK(guard_budget().held() == held + 2 * kGran);  // the kept range still holds its guard
  const auto b = map(0, 2 * kGran, 16, Side::back);
  REQUIRE(b.ok);
  CHECK(b.m.range_reused);
  CHECK(b.m.layout.reserved_begin == a.m.layout.reserved_begin);
  CHECK(b.m.layout.guard_size() == 2 * kGran);
  CHECK(guard_budget().held() == held + 2 * kGran);  // counted once
  // A buffer of another size does not take it: its guard would not be its own size.
  free_fenced(b);
  const auto c = map(0, 3 * kGran, 16, Side::back);
  REQUIRE(c.ok);
  CHECK_FALSE(c.m.range_reused);
  CHECK(c.m.layout.guard_size() == 3 * kGran);
  free_fenced(c);
  kept_ranges().drain(fake_driver_calls());
  CHECK(guard_budget().held() == held);
}

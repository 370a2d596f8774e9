#include <catch2/catch.hpp>

#include <string>

#include "run/attribution.h"
#include "tests/run/run_fixtures.h"

using namespace cudadiag::run;

namespace {

constexpr std::uint64_t kGranule = 2u << 20;

// A back-fenced allocation as the interposer places it: the buffer ends `align`-aligned
// just below a granule boundary, the guard granule follows.
AllocationRecord back_fenced(std::uint64_t seq, std::uint64_t mapped_begin, std::uint64_t bytes,
                             std::uint64_t align = 16) {
  AllocationRecord a;
  a.seq = seq;
  a.bytes = bytes;
  a.mapped_begin = mapped_begin;
  a.mapped_end = mapped_begin + ((bytes + kGranule - 1) / kGranule) * kGranule;
  const std::uint64_t rounded = (bytes + align - 1) / align * align;
  a.address = a.mapped_end - rounded;
  a.guard_begin = a.mapped_end;
  a.guard_end = a.mapped_end + kGranule;
  a.side = FenceSide::back;
  a.api = "cuMemAlloc_v2";
  return a;
}

AllocationRecord front_fenced(std::uint64_t seq, std::uint64_t guard_begin, std::uint64_t bytes) {
  AllocationRecord a;
  a.seq = seq;
  a.bytes = bytes;
  a.guard_begin = guard_begin;
  a.guard_end = guard_begin + kGranule;
  a.mapped_begin = a.guard_end;
  a.mapped_end = a.mapped_begin + ((bytes + kGranule - 1) / kGranule) * kGranule;
  a.address = a.mapped_begin;
  a.side = FenceSide::front;
  a.api = "cuMemAlloc_v2";
  return a;
}

LaunchRecord launch(std::uint64_t seq, const std::string& kernel, std::vector<std::uint64_t> args) {
  LaunchRecord l;
  l.seq = seq;
  l.kernel = kernel;
  l.api = "cuLaunchKernel";
  l.pointer_args = std::move(args);
  return l;
}

InterposerLog sample_log() {
  InterposerLog log;
  log.summary.loaded = true;
  log.summary.cuda_seen = true;
  log.allocations.push_back(back_fenced(1, 0x7f0000000000, 4000));        // address 0x7f00001ff060
  log.allocations.push_back(back_fenced(2, 0x7f0000400000, 3u << 20));    // two granules
  log.allocations.push_back(front_fenced(3, 0x7f0001000000, 8192));
  log.summary.allocations = 3;
  log.summary.fenced = 3;
  log.launches.push_back(launch(10, "fill", {log.allocations[0].address}));
  log.launches.push_back(launch(11, "gather", {log.allocations[1].address, log.allocations[0].address}));
  log.launches.push_back(launch(12, "reduce", {log.allocations[2].address}));
  log.summary.launches = 3;
  return log;
}

}  // namespace

TEST_CASE("Xid page in the back guard: past the end, distance as a page range") {
  const auto log = sample_log();
  const auto& a1 = log.allocations[0];
  REQUIRE(a1.address + a1.bytes == 0x7f0000200000 - 0);  // 4000 is 16-aligned: ends flush
  const auto r = attribute_fault(log, a1.guard_begin, AddressPrecision::page);
  CHECK(r.relation == Relation::past_end);
  CHECK(r.certain);
  REQUIRE(r.allocation);
  CHECK(r.allocation->seq == 1);
  CHECK(r.distance_min == 0);
  CHECK(r.distance_max == 4095);
  // The newest launch that was passed allocation #1 is "gather", not the newest ("reduce").
  REQUIRE(r.suspect);
  CHECK(r.suspect->kernel == "gather");
  CHECK(r.suspect_uses_allocation);
  CHECK(r.summary.find("between 0 and 4095 bytes past the end") != std::string::npos);
  CHECK(r.summary.find("the Xid names the faulting 4 KiB page") != std::string::npos);
  CHECK(r.summary.find("allocation #1 (4000 bytes") != std::string::npos);
  CHECK(r.summary.find("kernel gather (launch #11) was passed this allocation") != std::string::npos);
}

TEST_CASE("a far overrun and an unaligned size: the lower bound counts from the buffer's end") {
  auto log = sample_log();
  log.allocations[0] = back_fenced(1, 0x7f0000000000, 4001, 16);  // 15 bytes of slack before the guard
  const auto& a = log.allocations[0];
  CHECK(a.guard_begin - (a.address + a.bytes) == 15);
  auto r = attribute_fault(log, a.guard_begin + 3 * 4096, AddressPrecision::page);
  CHECK(r.relation == Relation::past_end);
  CHECK(r.distance_min == 15 + 3 * 4096);
  CHECK(r.distance_max == 15 + 4 * 4096 - 1);
  // The sanitizer names the byte: exact distance.
  r = attribute_fault(log, a.address + a.bytes + 20, AddressPrecision::exact);
  CHECK(r.relation == Relation::past_end);
  CHECK(r.distance_min == 20);
  CHECK(r.distance_max == 20);
  CHECK(describe_distance(r) == "20 bytes past the end");
  // Inside the slack (mapped, so only a sanitizer address can land there): not certain.
  r = attribute_fault(log, a.address + a.bytes + 3, AddressPrecision::exact);
  CHECK(r.relation == Relation::past_end);
  CHECK_FALSE(r.certain);
  CHECK(r.distance_min == 3);
}

TEST_CASE("front guard: before the start") {
  const auto log = sample_log();
  const auto& a3 = log.allocations[2];
  // The last page of the guard, right before the buffer.
  auto r = attribute_fault(log, a3.address - 4096, AddressPrecision::page);
  CHECK(r.relation == Relation::before_start);
  CHECK(r.certain);
  CHECK(r.allocation->seq == 3);
  CHECK(r.distance_min == 1);
  CHECK(r.distance_max == 4096);
  CHECK(r.suspect->kernel == "reduce");
  r = attribute_fault(log, a3.address - 8, AddressPrecision::exact);
  CHECK(r.distance_min == 8);
  CHECK(describe_distance(r) == "8 bytes before the start");
}

TEST_CASE("freed and quarantined: use after free; a released quarantine is not certain") {
  auto log = sample_log();
  log.allocations[1].freed = true;
  const auto addr = log.allocations[1].address + 4096 * 5;
  auto r = attribute_fault(log, addr, AddressPrecision::page);
  CHECK(r.relation == Relation::use_after_free);
  CHECK(r.certain);
  CHECK(r.allocation->seq == 2);
  CHECK(r.summary.find("inside the freed allocation #2") != std::string::npos);
  log.allocations[1].quarantine_released = true;
  r = attribute_fault(log, addr, AddressPrecision::page);
  CHECK(r.relation == Relation::use_after_free);
  CHECK_FALSE(r.certain);
}

TEST_CASE("a live allocation reusing a released range wins over the freed one") {
  auto log = sample_log();
  log.allocations[1].freed = true;
  log.allocations[1].quarantine_released = true;
  AllocationRecord reuse = log.allocations[1];
  reuse.seq = 9;
  reuse.freed = false;
  reuse.quarantine_released = false;
  log.allocations.push_back(reuse);
  const auto r = attribute_fault(log, reuse.address + 64, AddressPrecision::exact);
  CHECK(r.relation == Relation::inside_live);
  CHECK(r.allocation->seq == 9);
}

TEST_CASE("inside a live allocation: not a guard fault") {
  const auto log = sample_log();
  const auto r = attribute_fault(log, log.allocations[1].address + 4096, AddressPrecision::page);
  CHECK(r.relation == Relation::inside_live);
  CHECK(r.allocation->seq == 2);
  CHECK(r.summary.find("inside the live allocation #2") != std::string::npos);
}

TEST_CASE("unfenced allocations: only the nearest one, within a window") {
  InterposerLog log;
  AllocationRecord a;
  a.seq = 4;
  a.address = 0x7e0000000000;
  a.bytes = 1000;
  a.mapped_begin = a.address;
  a.mapped_end = a.address + a.bytes;
  a.side = FenceSide::none;
  a.unfenced_reason = "managed memory";
  log.allocations.push_back(a);
  auto r = attribute_fault(log, a.address + a.bytes + 100, AddressPrecision::exact);
  CHECK(r.relation == Relation::past_end);
  CHECK_FALSE(r.certain);
  CHECK(r.distance_min == 100);
  CHECK(r.summary.find("nearest allocation, not a guard") != std::string::npos);
  r = attribute_fault(log, a.address - 50, AddressPrecision::exact);
  CHECK(r.relation == Relation::before_start);
  CHECK(r.distance_min == 50);
  r = attribute_fault(log, a.address + a.bytes + kNearestWindow + 4096, AddressPrecision::page);
  CHECK(r.relation == Relation::unknown);
  CHECK_FALSE(r.allocation);
}

TEST_CASE("no address, a null page, no launches") {
  const auto log = sample_log();
  auto r = attribute_fault(log, std::nullopt, AddressPrecision::page);
  CHECK(r.relation == Relation::unknown);
  REQUIRE(r.suspect);
  CHECK(r.suspect->kernel == "reduce");  // newest
  CHECK_FALSE(r.suspect_uses_allocation);
  CHECK(r.last_launches.size() == 3);
  CHECK(r.summary.rfind("no faulting address", 0) == 0);
  r = attribute_fault(log, 0, AddressPrecision::page);  // "faulted @ 0x0_00000000"
  CHECK(r.relation == Relation::unknown);
  CHECK(r.summary.find("null pointer") != std::string::npos);
  r = attribute_fault(InterposerLog{}, 0x7f0000000000, AddressPrecision::page);
  CHECK_FALSE(r.suspect);
  CHECK(r.summary.find("no launch was recorded") != std::string::npos);
}

TEST_CASE("the launch tail is bounded; contradictory logs do not wrap around") {
  auto log = sample_log();
  for (std::uint64_t i = 0; i < 100; ++i) log.launches.push_back(launch(100 + i, "k", {}));
  auto r = attribute_fault(log, log.allocations[0].guard_begin, AddressPrecision::page);
  CHECK(r.last_launches.size() == kLastLaunches);
  CHECK(r.last_launches.back().seq == 199);
  CHECK(r.suspect->kernel == "gather");  // older than the tail, still found
  // A guard that starts before the buffer's end (a corrupt record): distances clamp at 0.
  log.allocations[0].guard_begin = log.allocations[0].address;
  r = attribute_fault(log, log.allocations[0].address, AddressPrecision::page);
  CHECK(r.distance_min == 0);
  CHECK(r.distance_max < (1u << 20));
  // The top of the address space.
  CHECK_NOTHROW(attribute_fault(log, UINT64_MAX - 10, AddressPrecision::page));
}

TEST_CASE("fence effectiveness") {
  InterposerSummary s;
  CHECK_FALSE(fence_effective(s).effective);
  CHECK(fence_effective(s).reason.find("not loaded") != std::string::npos);
  CHECK_FALSE(fence_effective(s).cuda_unused);  // not loaded: nothing is known
  s.loaded = true;
  CHECK(fence_effective(s).reason.find("never resolved a CUDA driver entry point") != std::string::npos);
  CHECK(fence_effective(s).cuda_unused);  // loaded, no CUDA: nothing to fence
  CHECK_FALSE(fence_effective(s).effective);
  s.cuda_seen = true;
  CHECK_FALSE(fence_effective(s).cuda_unused);
  CHECK(fence_effective(s).reason.find("no device allocation") != std::string::npos);
  s.allocations = 12;
  CHECK(fence_effective(s).reason == "none of the 12 device allocations could be fenced");
  s.fenced = 2;
  s.launches = 50000;  // a pool: two slabs serve every launch
  auto e = fence_effective(s);
  CHECK_FALSE(e.effective);
  CHECK(e.reason.find("only 2 of 12 allocations were fenced against 50000 launches") != std::string::npos);
  s.launches = 150;  // a small program: 2 buffers, a few launches
  e = fence_effective(s);
  CHECK(e.effective);
  CHECK(e.reason == "2 of 12 allocations fenced, 150 launches");
  s.fenced = 12;
  s.launches = 50000;  // many allocations are fenced: the fence sees the program's buffers
  CHECK(fence_effective(s).effective);
}

TEST_CASE("few buffers against many launches: no pool when the kernels take the buffers' first bytes") {
  auto log = sample_log();
  log.summary.launches = 4000;  // three buffers allocated once, launched on 4000 times
  const auto by_counts = fence_effective(log.summary);
  CHECK_FALSE(by_counts.effective);
  auto e = fence_effective(log);
  CHECK(e.effective);
  CHECK(e.reason == "3 of 3 allocations fenced, 4000 launches (on the buffers' own first bytes: no pool)");
  // Pieces of a slab: pointers inside the buffers, more of them than the buffers' starts.
  const auto base = log.allocations[1].address;
  for (std::uint64_t k = 1; k <= 5; ++k) log.launches.push_back(launch(20 + k, "piece", {base + k * 4096}));
  e = fence_effective(log);
  CHECK_FALSE(e.effective);
  CHECK(e.reason == by_counts.reason);
  // No launch kept with a pointer into a fenced buffer: the counts decide.
  log.launches.clear();
  CHECK_FALSE(fence_effective(log).effective);
  // A pointer past every buffer is not one of them.
  log.launches.push_back(launch(30, "elsewhere", {0x7f0002000000}));
  CHECK_FALSE(fence_effective(log).effective);
}

TEST_CASE("a fault after TMA encodes, near a guard, is possibly the fence") {
  auto log = sample_log();
  auto r = attribute_fault(log, log.allocations[0].guard_begin, AddressPrecision::page);
  CHECK_FALSE(fence_suspicion(log.summary, r));
  log.summary.tma_encodes = 3;
  // Every descriptor's base has 128 KiB mapped after it: TMA cannot reach a guard that way.
  CHECK_FALSE(fence_suspicion(log.summary, r));
  log.summary.tma_near_guard = 1;
  const auto why = fence_suspicion(log.summary, r);
  REQUIRE(why);
  CHECK(why->find("3 TMA descriptor(s)") != std::string::npos);
  CHECK(why->find("1 with its base less than 128 KiB before a fence guard") != std::string::npos);
  CHECK(why->find("possibly the fence") != std::string::npos);
  // Far past the end (1 MiB): TMA's 128 KiB reach cannot explain it.
  r = attribute_fault(log, log.allocations[0].guard_begin + (1u << 20), AddressPrecision::page);
  CHECK(r.relation == Relation::past_end);
  CHECK_FALSE(fence_suspicion(log.summary, r));
  // Inside a live buffer: not a guard, not the fence.
  r = attribute_fault(log, log.allocations[1].address, AddressPrecision::exact);
  CHECK_FALSE(fence_suspicion(log.summary, r));
}

TEST_CASE("attribution: whose fault, in words: rank and pid, else the pid; told only where there is a choice",
          "[attribution]") {
  ProcessIdentity p;
  p.recorded = true;
  p.pid = 1703;
  DeviceIdentity gpu;
  gpu.ordinal = 1;
  gpu.pci_bus_id = "0000:00:07.0";
  CHECK(owner_text(p, 1, gpu) == "pid 1703 on GPU 1 (0000:00:07.0)");
  CHECK(owner_text(p, 1, std::nullopt) == "pid 1703 on GPU 1");
  CHECK(owner_text(std::nullopt, std::nullopt, gpu) == "GPU 1 (0000:00:07.0)");
  CHECK(owner_text(std::nullopt, std::nullopt, std::nullopt).empty());
  p.rank = 1;
  CHECK(owner_text(p, 1, gpu) == "rank 1 (pid 1703) on GPU 1 (0000:00:07.0)");

  // One process on one GPU, no launcher: the sentence stays as it was; the record knows.
  InterposerLog log = testing::fenced_log();
  log.process.recorded = true;
  log.process.pid = 1703;
  for (auto& a : log.allocations) a.device = 0;
  DeviceIdentity gpu0;
  gpu0.ordinal = 0;
  gpu0.pci_bus_id = "0000:00:06.0";
  log.devices = {gpu0};
  const Attribution alone = attribute_fault(log, 0x7f0000200000, AddressPrecision::page);
  CHECK_FALSE(alone.names_owner);
  CHECK_THAT(alone.summary, !Catch::Contains("pid 1703"));
  REQUIRE(alone.process);
  CHECK(owner_text(alone) == "pid 1703 on GPU 0 (0000:00:06.0)");
  // Another process recorded in the run: named.
  log.processes_recorded = 2;
  const Attribution among = attribute_fault(log, 0x7f0000200000, AddressPrecision::page);
  CHECK(among.names_owner);
  CHECK_THAT(among.summary, Catch::StartsWith("the fault at 0x7f0000200000 (page) in pid 1703 on GPU 0 (0000:00:06.0) is "
                                              "between 0 and 4095 bytes past the end of allocation #7"));
}

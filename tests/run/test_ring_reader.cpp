#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "fence/ring_format.h"
#include "run/attribution.h"
#include "run/ring_reader.h"
#include "ring_fixture.h"

using namespace cudadiag;
using namespace cudadiag::run;
using cudadiag::test::ScopedWriter;

TEST_CASE("ring: allocations, launches and counters come back as written", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  ScopedWriter w(file, test::small_limits(8, 8));
  REQUIRE(w.attached());
  w->add_process_loaded();
  w->set_cuda_seen();
  REQUIRE(w->claim(4242));

  const auto a = w->add_allocation(test::fenced_event(0x7f32309ff060, 4000));
  interposer::AllocationEvent failed;
  failed.address = 0x7f0000000000;
  failed.bytes = 512;
  failed.mapped_begin = failed.address;
  failed.mapped_end = failed.address + 512;
  failed.api = ring::Api::cuMemAllocAsync;
  failed.side = ring::Side::none;
  failed.unfenced_reason = ring::Unfenced::vmm_failed;
  failed.failed_call = ring::VmmCall::create;
  failed.failed_result = 2;
  w->add_allocation(failed);
  w->set_state(a, ring::State::freed, ring::Api::cuMemFree_v2);
  w->add(&ring::Header::frees, 1);
  for (int i = 0; i < 3; ++i) w->add_tma_map(test::tma_event(0x7f32309ff060 + i * 0x100, i == 2));
  w->add_driver_call(ring::DriverCall::create, 40000);
  w->add_driver_call(ring::DriverCall::create, 60000);
  w->add_driver_call(ring::DriverCall::ctx_synchronize, 5000);
  w->add(&ring::Header::handles_reused, 7);
  w->add(&ring::Header::reservations_reused, 5);
  w->add_launch(test::launch_event(*w, "_Z10fill_bytesPhmi", 0x7f32309ff060));

  const RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.message.empty());
  CHECK(r.owner_pid == 4242);
  CHECK(r.processes_loaded == 1);
  const InterposerSummary& s = r.log.summary;
  CHECK(s.loaded);
  CHECK(s.cuda_seen);
  CHECK(s.allocations == 2);
  CHECK(s.fenced == 1);
  CHECK(s.frees == 1);
  CHECK(s.launches == 1);
  CHECK(s.tma_encodes == 3);
  CHECK(s.tma_near_guard == 1);
  CHECK(s.dropped_allocations == 0);
  CHECK(s.dropped_launches == 0);
  CHECK(s.dropped_tma_maps == 0);
  CHECK(s.fence_align == 16);
  CHECK(r.torn_records == 0);

  REQUIRE(r.log.tma_maps.size() == 3);
  const TmaMapRecord& far = r.log.tma_maps[0];
  CHECK(far.seq == 0);
  CHECK(far.api == "cuTensorMapEncodeTiled");
  CHECK(far.address == 0x7f32309ff060);
  CHECK(far.rank == 2);
  CHECK(far.span_bytes == 4000);
  CHECK(far.allocation_address == 0x7f32309ff060);
  CHECK(far.in_fenced);
  CHECK_FALSE(far.near_guard);
  const TmaMapRecord& near = r.log.tma_maps[2];
  CHECK(near.seq == 2);
  CHECK(near.address == 0x7f32309ff260);
  CHECK(near.near_guard);
  CHECK(near.mapped_after == 0xda0);
  CHECK(near.past_buffer);
  CHECK(near.result == 0);

  REQUIRE(r.driver_calls.size() == 2);
  CHECK(r.driver_calls[0].name == "cuMemCreate");
  CHECK(r.driver_calls[0].calls == 2);
  CHECK(r.driver_calls[0].nanoseconds == 100000);
  CHECK(r.driver_calls[1].name == "cuCtxSynchronize");
  CHECK(r.driver_calls[1].calls == 1);
  CHECK(r.handles_reused == 7);
  CHECK(r.reservations_reused == 5);

  REQUIRE(r.log.allocations.size() == 2);
  const AllocationRecord& fenced = r.log.allocations[0];
  CHECK(fenced.seq == 0);
  CHECK(fenced.address == 0x7f32309ff060);
  CHECK(fenced.bytes == 4000);
  CHECK(fenced.guard_begin == 0x7f3230a00000);
  CHECK(fenced.side == FenceSide::back);
  CHECK(fenced.freed);
  CHECK_FALSE(fenced.quarantine_released);
  CHECK(fenced.api == "cuMemAlloc_v2");
  CHECK(fenced.unfenced_reason.empty());
  const AllocationRecord& unfenced = r.log.allocations[1];
  CHECK(unfenced.seq == 1);
  CHECK(unfenced.side == FenceSide::none);
  CHECK_FALSE(unfenced.freed);
  CHECK(unfenced.api == "cuMemAllocAsync");
  CHECK(unfenced.unfenced_reason == "VMM failed: cuMemCreate returned 2");

  REQUIRE(r.log.launches.size() == 1);
  const LaunchRecord& l = r.log.launches[0];
  CHECK(l.kernel == "fill_bytes(unsigned char*, unsigned long, int)");
  CHECK(l.grid[0] == 8);
  CHECK(l.grid[1] == 1);
  CHECK(l.block[0] == 128);
  CHECK(l.dynamic_smem == 1024);
  CHECK(l.stream == 0x5);
  CHECK(l.api == "cuLaunchKernel_ptsz");
  CHECK(l.pointer_args == std::vector<std::uint64_t>{0x7f32309ff060});
}

TEST_CASE("ring: no file, an empty file, a foreign file, another version", "[ring_reader]") {
  test::TempDir dir;
  SECTION("missing: the interposer never loaded") {
    const RingRead r = read_ring(dir / "never-written");
    CHECK(r.status == RingStatus::missing);
    CHECK_FALSE(r.log.summary.loaded);
    CHECK(r.message.find("never-written") != std::string::npos);
    CHECK(r.message.find("never loaded") != std::string::npos);
  }
  SECTION("empty") {
    test::write_bytes(dir / "empty", "");
    const RingRead r = read_ring(dir / "empty");
    CHECK(r.status == RingStatus::empty);
    CHECK_FALSE(r.log.summary.loaded);
    CHECK(r.message.find("empty") != std::string::npos);
  }
  SECTION("foreign: the writer leaves it alone, the reader names it") {
    const std::string text = "not a ring, but someone's notes\n";
    test::write_bytes(dir / "notes", text);
    ScopedWriter w(dir / "notes", test::small_limits(4, 4));
    CHECK_FALSE(w.attached());
    CHECK(w.why().find("not a ring file") != std::string::npos);
    CHECK(test::read_bytes(dir / "notes") == text);
    const RingRead r = read_ring(dir / "notes");
    CHECK(r.status == RingStatus::bad_magic);
    CHECK_FALSE(r.readable());
    CHECK(r.message.find("not a cudadiag ring file") != std::string::npos);
  }
  SECTION("another format version, older or newer") {
    for (const std::uint32_t other : {ring::kVersion - 1, ring::kVersion + 1}) {
      { ScopedWriter w(dir / "other", test::small_limits(4, 4)); }
      std::string bytes = test::read_bytes(dir / "other");
      std::memcpy(bytes.data() + offsetof(ring::Header, version), &other, sizeof other);
      test::write_bytes(dir / "other", bytes);
      const RingRead r = read_ring(dir / "other");
      CHECK(r.status == RingStatus::bad_version);
      CHECK_FALSE(r.readable());
      CHECK(r.message.find("ring format version " + std::to_string(other) + ", written by another cudadiag") !=
            std::string::npos);
      CHECK(r.message.find("reads version " + std::to_string(ring::kVersion) + " only") != std::string::npos);
      std::filesystem::remove(dir / "other");
    }
  }
  SECTION("a header never completed") {
    test::write_bytes(dir / "zeros", std::string(4096, '\0'));
    CHECK(read_ring(dir / "zeros").status == RingStatus::incomplete);
  }
  SECTION("a layout that does not match its counts") {
    { ScopedWriter w(dir / "bad-layout", test::small_limits(4, 4)); }
    std::string bytes = test::read_bytes(dir / "bad-layout");
    const std::uint32_t capacity = 1u << 30;
    std::memcpy(bytes.data() + offsetof(ring::Header, launch_capacity), &capacity, sizeof capacity);
    test::write_bytes(dir / "bad-layout", bytes);
    CHECK(read_ring(dir / "bad-layout").status == RingStatus::bad_version);
  }
}

TEST_CASE("ring: a process loaded without CUDA says so", "[ring_reader]") {
  test::TempDir dir;
  {
    ScopedWriter w(dir / "ring", test::small_limits(4, 4));
    REQUIRE(w.attached());
    w->add_process_loaded();
  }
  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.summary.loaded);
  CHECK_FALSE(r.log.summary.cuda_seen);
  CHECK(r.owner_pid == 0);
  CHECK(r.log.allocations.empty());
  CHECK(r.log.launches.empty());
}

TEST_CASE("ring: a wrapped launch ring keeps the newest launches and counts the rest", "[ring_reader]") {
  test::TempDir dir;
  ScopedWriter w(dir / "ring", test::small_limits(4, 4));
  REQUIRE(w.attached());
  for (int i = 0; i < 10; ++i) w->add_launch(test::launch_event(*w, "kernel_" + std::to_string(i), 0));
  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.summary.launches == 10);
  CHECK(r.log.summary.dropped_launches == 6);
  REQUIRE(r.log.launches.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(r.log.launches[i].seq == 6 + i);
    CHECK(r.log.launches[i].kernel == "kernel_" + std::to_string(6 + i));
  }
}

TEST_CASE("ring: a wrapped TMA ring keeps the newest descriptors; the counters keep every one", "[ring_reader]") {
  test::TempDir dir;
  ScopedWriter w(dir / "ring", test::small_limits(4, 4, 4096, 2));
  REQUIRE(w.attached());
  for (int i = 0; i < 5; ++i) w->add_tma_map(test::tma_event(0x7f32309ff060 + i * 0x10, i == 0));
  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.summary.tma_encodes == 5);
  CHECK(r.log.summary.tma_near_guard == 1);  // the first one, overwritten since
  CHECK(r.log.summary.dropped_tma_maps == 3);
  REQUIRE(r.log.tma_maps.size() == 2);
  CHECK(r.log.tma_maps[0].seq == 3);
  CHECK(r.log.tma_maps[1].address == 0x7f32309ff0a0);
}

TEST_CASE("ring: live allocations are kept, freed ones give way oldest first", "[ring_reader]") {
  test::TempDir dir;
  ScopedWriter w(dir / "ring", test::small_limits(3, 4));
  REQUIRE(w.attached());
  const auto a = w->add_allocation(test::fenced_event(0x10000000, 16));
  const auto b = w->add_allocation(test::fenced_event(0x20000000, 16));
  w->add_allocation(test::fenced_event(0x30000000, 16));
  // Every slot holds a live allocation: the fourth is counted, not recorded.
  const auto d = w->add_allocation(test::fenced_event(0x40000000, 16));
  CHECK(d.slot == interposer::RecordRef::kNoSlot);
  w->set_state(b, ring::State::freed, ring::Api::cuMemFree_v2);
  w->set_state(a, ring::State::released, ring::Api::cuMemFree_v2);
  // b was freed first: its slot goes first.
  w->add_allocation(test::fenced_event(0x50000000, 16));

  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.summary.allocations == 5);
  CHECK(r.log.summary.dropped_allocations == 2);
  REQUIRE(r.log.allocations.size() == 3);
  CHECK(r.log.allocations[0].address == 0x10000000);
  CHECK(r.log.allocations[0].freed);
  CHECK(r.log.allocations[0].quarantine_released);
  CHECK(r.log.allocations[1].address == 0x30000000);
  CHECK(r.log.allocations[2].address == 0x50000000);
  CHECK(r.log.allocations[2].seq == 4);
}

TEST_CASE("ring: records being written when the process died are dropped and counted", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  {
    ScopedWriter w(file, test::small_limits(4, 4));
    REQUIRE(w.attached());
    w->add_allocation(test::fenced_event(0x10000000, 16));
    w->add_allocation(test::fenced_event(0x20000000, 32));
    w->add_launch(test::launch_event(*w, "first", 0));
    w->add_launch(test::launch_event(*w, "second", 0));
  }
  std::string bytes = test::read_bytes(file);
  ring::Header h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  // The second allocation and the second launch were half written.
  const std::uint64_t torn_alloc = ring::writing_stamp(1);
  std::memcpy(bytes.data() + h.allocations_offset + sizeof(ring::AllocationSlot), &torn_alloc, sizeof torn_alloc);
  const std::uint64_t torn_launch = ring::writing_stamp(1);
  std::memcpy(bytes.data() + h.launches_offset + sizeof(ring::LaunchSlot), &torn_launch, sizeof torn_launch);
  test::write_bytes(file, bytes);

  const RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.torn_records == 2);
  REQUIRE(r.log.allocations.size() == 1);
  CHECK(r.log.allocations[0].address == 0x10000000);
  CHECK(r.log.summary.dropped_allocations == 1);
  REQUIRE(r.log.launches.size() == 1);
  CHECK(r.log.launches[0].kernel == "first");
  CHECK(r.log.summary.dropped_launches == 1);
}

TEST_CASE("ring: a file cut short keeps what precedes the cut", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  {
    ScopedWriter w(file, test::small_limits(4, 4));
    REQUIRE(w.attached());
    w->add_allocation(test::fenced_event(0x10000000, 16));
    for (const char* name : {"k0", "k1", "k2"}) w->add_launch(test::launch_event(*w, name, 0));
  }
  std::string bytes = test::read_bytes(file);
  ring::Header h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  SECTION("inside the launch ring") {
    bytes.resize(h.launches_offset + sizeof(ring::LaunchSlot) + 10);
    test::write_bytes(file, bytes);
    const RingRead r = read_ring(file);
    CHECK(r.status == RingStatus::truncated);
    CHECK(r.readable());
    CHECK(r.message.find("records past the end are lost") != std::string::npos);
    CHECK(r.log.allocations.size() == 1);
    REQUIRE(r.log.launches.size() == 1);
    CHECK(r.log.launches[0].kernel.rfind("k0", 0) == 0);  // its name lies past the cut: the prefix stands in
    CHECK(r.log.summary.launches == 3);
    CHECK(r.log.summary.dropped_launches == 2);
  }
  SECTION("inside the header") {
    bytes.resize(40);
    test::write_bytes(file, bytes);
    const RingRead r = read_ring(file);
    CHECK(r.status == RingStatus::truncated);
    CHECK(r.log.summary.loaded);
    CHECK(r.log.allocations.empty());
  }
}

TEST_CASE("ring: kernel names beyond the names region keep their first bytes", "[ring_reader]") {
  test::TempDir dir;
  ScopedWriter w(dir / "ring", test::small_limits(4, 4, 1024));
  REQUIRE(w.attached());
  const std::string long_name = "_Z" + std::to_string(900) + std::string(900, 'k') + "v";
  w->add_launch(test::launch_event(*w, long_name, 0));  // fits (905 bytes)
  w->add_launch(test::launch_event(*w, long_name, 0));  // does not: prefix only
  w->add_launch(test::launch_event(*w, "_Z5shortv", 0));
  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.log.launches.size() == 3);
  CHECK(r.log.launches[0].kernel == std::string(900, 'k') + "()");
  CHECK(r.log.launches[1].kernel == long_name.substr(0, ring::kNamePrefixBytes - 1) + "...");
  CHECK(r.log.launches[2].kernel == "short()");
}

TEST_CASE("ring: the first process to claim a file owns it", "[ring_reader]") {
  test::TempDir dir;
  ScopedWriter first(dir / "ring", test::small_limits(4, 4));
  REQUIRE(first.attached());
  // A second process attaches to the file the first laid out, with other limits: the
  // file's layout wins.
  ScopedWriter second(dir / "ring", test::small_limits(64, 64));
  REQUIRE(second.attached());
  CHECK(second->header()->allocation_capacity == 4);
  CHECK(first->claim(100));
  CHECK(first->claim(100));
  CHECK_FALSE(second->claim(200));
  second->add_other_cuda_process();
  const RingRead r = read_ring(dir / "ring");
  CHECK(r.owner_pid == 100);
  CHECK(r.other_cuda_processes == 1);
}

TEST_CASE("ring: per-process files are found next to the main one", "[ring_reader]") {
  test::TempDir dir;
  for (const char* name : {"ring", "ring.123", "ring.45", "ring.x", "ring.12a", "other.7"})
    test::write_bytes(dir / name, "");
  const auto files = process_ring_files(dir / "ring");
  REQUIRE(files.size() == 2);
  CHECK(files[0].filename() == "ring.45");
  CHECK(files[1].filename() == "ring.123");
}

namespace {

// A header laid out by the writer, then given other counts: the file's other bytes are
// left to the test.
std::string crafted_header(const test::TempDir& dir, std::uint32_t allocations, std::uint32_t launches,
                           std::uint32_t tma_maps, std::uint32_t names) {
  { ScopedWriter w(dir / "template", test::small_limits(4, 4)); }
  std::string bytes = test::read_bytes(dir / "template").substr(0, ring::kHeaderBytes);
  ring::Header h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  ring::Capacities c = ring::capacities_of(h);
  c.allocations = allocations;
  c.launches = launches;
  c.tma_maps = tma_maps;
  c.name_bytes = names;
  const ring::Layout l = ring::layout_for(c);
  h.allocation_capacity = allocations;
  h.launch_capacity = launches;
  h.tma_capacity = tma_maps;
  h.names_capacity = names;
  h.allocations_offset = l.allocations_offset;
  h.launches_offset = l.launches_offset;
  h.tma_offset = l.tma_offset;
  h.names_offset = l.names_offset;
  h.sites_offset = l.sites_offset;
  h.modules_offset = l.modules_offset;
  h.file_bytes = l.file_bytes;
  h.launches = ~0ull;
  h.tma_encodes = ~0ull;
  h.allocations = ~0ull;
  h.names_used = ~0ull;
  std::memcpy(bytes.data(), &h, sizeof h);
  return bytes;
}

double seconds_to_read(const std::filesystem::path& file, RingRead& out) {
  const auto t0 = std::chrono::steady_clock::now();
  out = read_ring(file);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Peak resident memory of this process since the last reset, in KiB.
long peak_rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  return static_cast<bool>(clear.flush());
}

}  // namespace

TEST_CASE("ring: a crafted 4 KiB header costs what its bytes are worth, not what its counts say", "[ring_reader]") {
  test::TempDir dir;
  // Counts beyond anything the interposer writes: refused at once.
  test::write_bytes(dir / "huge-counts", crafted_header(dir, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu));
  RingRead r;
  CHECK(seconds_to_read(dir / "huge-counts", r) < 1.0);
  CHECK(r.status == RingStatus::bad_version);
  // The largest counts the interposer writes, in a file of one header: only what is there is read.
  test::write_bytes(dir / "largest", crafted_header(dir, ring::kMaxSlots, ring::kMaxSlots, ring::kMaxSlots,
                                                    ring::kMaxNameBytes));
  CHECK(seconds_to_read(dir / "largest", r) < 1.0);
  CHECK(r.status == RingStatus::truncated);
  CHECK(r.log.launches.empty());
  CHECK(r.log.summary.dropped_launches == ~0ull);
}

TEST_CASE("ring: a large sparse ring is read with bounded memory", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "sparse";
  const std::string header = crafted_header(dir, ring::kMaxSlots, 1, 1, 1024);
  test::write_bytes(file, header);
  ring::Header h{};
  std::memcpy(&h, header.data(), sizeof h);
  std::filesystem::resize_file(file, h.file_bytes);  // 512 MiB of holes
  if (!reset_peak_rss() || peak_rss_kb() < 0) {
    std::puts("SKIPPED: /proc/self/clear_refs or VmHWM not available");
    return;
  }
  const long before = peak_rss_kb();
  RingRead r;
  CHECK(seconds_to_read(file, r) < 20.0);
  CHECK(r.status == RingStatus::ok);
  CHECK(r.log.allocations.empty());
  CHECK(peak_rss_kb() - before < 64 * 1024);
}

TEST_CASE("ring: what happened to the run's processes comes back", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  {
    ScopedWriter w(file, test::small_limits(4, 4));
    REQUIRE(w.attached());
    w->add_event(ring::EventKind::preload_restored, 101, "/usr/bin/env");
    w->add_event(ring::EventKind::escaped_static, 102, "/opt/static_tool");
    w->add_event(ring::EventKind::deepbind_cuda, 103, std::string(300, 'x').c_str());  // cut to fit
    for (int i = 0; i < 20; ++i) w->add_event(ring::EventKind::escaped_setid, 200 + i, "/usr/bin/sudo");
  }
  const RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.preloads_restored == 1);
  CHECK(r.log.escapes == 22);
  REQUIRE(r.log.process_events.size() == ring::kMaxProcessEvents);
  CHECK(r.log.process_events_lost == 23 - ring::kMaxProcessEvents);
  const auto& restored = r.log.process_events[0];
  CHECK(restored.pid == 101);
  CHECK(restored.program == "/usr/bin/env");
  CHECK(restored.what == "LD_PRELOAD restored");
  CHECK_FALSE(restored.escaped);
  CHECK(r.log.process_events[1].escaped);
  CHECK(r.log.process_events[1].what.find("statically linked") != std::string::npos);
  CHECK(r.log.process_events[2].program == std::string(ring::kEventProgramBytes - 1, 'x'));
  CHECK(r.log.process_events[2].what == "CUDA loaded with RTLD_DEEPBIND: calls from it bypass the fence");
}

TEST_CASE("ring: the writer opens no link, nothing foreign, no existing per-process file", "[ring_reader]") {
  test::TempDir dir;
  test::write_bytes(dir / "target", "keep");
  std::filesystem::create_symlink(dir / "target", dir / "link");
  interposer::RingWriter w;
  const char* why = "";
  CHECK_FALSE(w.attach((dir / "link").c_str(), test::small_limits(4, 4), {}, interposer::RingOpen::shared, &why));
  CHECK(std::string(why).find("symbolic link") != std::string::npos);
  CHECK(test::read_bytes(dir / "target") == "keep");
  // A per-process file is made here or not at all.
  test::write_bytes(dir / "ring.77", "");
  CHECK_FALSE(w.attach((dir / "ring.77").c_str(), test::small_limits(4, 4), {}, interposer::RingOpen::exclusive, &why));
  CHECK(std::string(why).find("exists already") != std::string::npos);
  REQUIRE(w.attach((dir / "ring.78").c_str(), test::small_limits(4, 4), {}, interposer::RingOpen::exclusive, &why));
  w.detach();
  const auto mode = std::filesystem::status(dir / "ring.78").permissions() & std::filesystem::perms::all;
  CHECK(mode == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  // Its blocks are reserved: the reader says so.
  const RingRead r = read_ring(dir / "ring.78");
  CHECK(r.status == RingStatus::ok);
  CHECK_FALSE(r.log.ring.unreserved);
  // A hard link to another file is refused (it would write into that file).
  std::filesystem::create_hard_link(dir / "target", dir / "hard");
  CHECK_FALSE(w.attach((dir / "hard").c_str(), test::small_limits(4, 4), {}, interposer::RingOpen::shared, &why));
  CHECK(test::read_bytes(dir / "target") == "keep");
}

TEST_CASE("ring: a buffer's guard comes back, and an address its own size past its end is placed in it",
          "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  interposer::RingSettings settings;
  settings.guard_mode = fence::GuardMode::scaled;
  settings.guard_limit_bytes = fence::kMaxGuardBytes;
  settings.guard_total_limit_bytes = fence::kMaxGuardTotalBytes;
  ScopedWriter w(file, test::small_limits(8, 8), settings);
  REQUIRE(w.attached());
  w->add_process_loaded();
  w->set_cuda_seen();
  REQUIRE(w->claim(4242));
  // A 4 MiB buffer placed as the interposer places it, its guard as large as its mapping.
  constexpr std::uint64_t kSize = 4ull << 20;
  const std::uint64_t mapped = fence::mapped_size(kSize, 2ull << 20, 16);
  const std::uint64_t guard = fence::guard_size(fence::wanted_guard(mapped, 2ull << 20, fence::GuardMode::scaled),
                                                2ull << 20, 0);
  const fence::Layout l = fence::place(0x7f0000000000, kSize, 2ull << 20, 16, fence::Side::back, guard);
  interposer::AllocationEvent e;
  e.address = l.address;
  e.bytes = kSize;
  e.mapped_begin = l.mapped_begin;
  e.mapped_end = l.mapped_end();
  e.guard_begin = l.guard_begin;
  e.guard_end = l.guard_end;
  e.guard_wanted = guard;
  e.api = ring::Api::cuMemAlloc_v2;
  e.side = ring::Side::back;
  e.device = 0;
  w->add_allocation(e);
  w->add(&ring::Header::guards_cut, 2);

  const RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  REQUIRE(r.log.allocations.size() == 1);
  const AllocationRecord& a = r.log.allocations[0];
  CHECK(a.guard_begin == a.address + kSize);
  CHECK(a.guard_end == a.address + 2 * kSize);
  CHECK(a.guard_bytes() == kSize);
  CHECK(a.guard_wanted == kSize);
  const InterposerSummary& s = r.log.summary;
  CHECK(s.guard_mode == fence::GuardMode::scaled);
  CHECK(s.guard_limit_bytes == fence::kMaxGuardBytes);
  CHECK(s.guard_total_limit_bytes == fence::kMaxGuardTotalBytes);
  CHECK(s.guards_cut == 2);

  // 1x the buffer's size past its end: the guard's last byte, two granules past its first.
  const std::uint64_t far = a.address + kSize + kSize - 1;
  auto at = attribute_fault(r.log, far, AddressPrecision::exact);
  CHECK(at.relation == Relation::past_end);
  CHECK(at.certain);
  REQUIRE(at.allocation);
  CHECK(at.allocation->seq == a.seq);
  CHECK(at.distance_min == kSize - 1);
  CHECK(at.distance_max == kSize - 1);
  CHECK(at.summary.find("4194303 bytes past the end of allocation #" + std::to_string(a.seq) + " (4194304 bytes") !=
        std::string::npos);
  // The Xid's page, 3 MiB past the end (beyond a one-granule guard): still this buffer's.
  at = attribute_fault(r.log, a.address + kSize + (3ull << 20), AddressPrecision::page);
  CHECK(at.relation == Relation::past_end);
  CHECK(at.certain);
  CHECK(at.distance_min == 3ull << 20);
  // Beyond the guard: not the buffer's guard any more.
  at = attribute_fault(r.log, a.address + 2 * kSize, AddressPrecision::exact);
  CHECK_FALSE(at.certain);
}

TEST_CASE("ring: CUDADIAG_GUARD=granule comes back in the summary", "[ring_reader]") {
  test::TempDir dir;
  const auto file = dir / "ring";
  interposer::RingSettings settings;
  settings.guard_mode = fence::GuardMode::granule;
  ScopedWriter w(file, test::small_limits(8, 8), settings);
  REQUIRE(w.attached());
  w->add_process_loaded();
  const RingRead r = read_ring(file);
  REQUIRE(r.status == RingStatus::ok);
  CHECK(r.log.summary.guard_mode == fence::GuardMode::granule);
}

TEST_CASE("ring: who recorded (pid, executable, rank) and the GPUs it used come back as written", "[ring_reader]") {
  test::TempDir dir;
  ScopedWriter w(dir / "ring", test::small_limits(4, 4));
  REQUIRE(w.attached());
  interposer::IdentityEvent id;
  id.pid = 1703;
  id.rank = 1;
  id.local_rank = 1;
  id.world_size = 2;
  id.rank_from = ring::LauncherVar::rank;
  id.local_rank_from = ring::LauncherVar::local_rank;
  id.world_size_from = ring::LauncherVar::world_size;
  // A path longer than the slot keeps its last bytes: they name the file.
  const std::string exe = "/opt/" + std::string(400, 'd') + "/bin/python3.12";
  id.exe = exe.c_str();
  w->set_identity(id);
  interposer::DeviceEvent gpu1;
  gpu1.ordinal = 1;
  gpu1.uuid_result = 0;
  gpu1.bus_id_result = 0;
  gpu1.uuid[0] = 0x8c;
  gpu1.uuid[15] = 0x01;
  std::snprintf(gpu1.pci_bus_id, sizeof gpu1.pci_bus_id, "%s", "0000:08:00.0");
  CHECK_FALSE(w->has_device(1));
  w->add_device(gpu1);
  CHECK(w->has_device(1));
  w->add_device(gpu1);  // once per device
  interposer::DeviceEvent gpu0;
  gpu0.ordinal = 0;
  gpu0.uuid_result = 100;  // CUDA_ERROR_NO_DEVICE: no UUID, no bus id
  w->add_device(gpu0);

  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.status == RingStatus::ok);
  const ProcessIdentity& p = r.log.process;
  CHECK(p.recorded);
  CHECK(p.pid == 1703);
  CHECK(p.rank == 1);
  CHECK(p.local_rank == 1);
  CHECK(p.world_size == 2);
  CHECK(p.rank_from == "RANK");
  CHECK(p.local_rank_from == "LOCAL_RANK");
  CHECK(p.world_size_from == "WORLD_SIZE");
  CHECK(p.exe.size() == ring::kExeBytes - 1);
  CHECK(exe.compare(exe.size() - p.exe.size(), p.exe.size(), p.exe) == 0);
  REQUIRE(r.log.devices.size() == 2);
  CHECK(r.log.devices_lost == 0);
  CHECK(r.log.devices[0].ordinal == 1);
  CHECK(r.log.devices[0].uuid == "GPU-8c000000-0000-0000-0000-000000000001");
  CHECK(r.log.devices[0].pci_bus_id == "0000:08:00.0");
  CHECK(r.log.devices[1].ordinal == 0);
  CHECK(r.log.devices[1].uuid_result == 100);
  CHECK(r.log.devices[1].uuid.empty());
  CHECK(r.log.devices[1].pci_bus_id.empty());
  CHECK(r.log.devices[1].bus_id_result == -1);
}

TEST_CASE("ring: a ring its owner never named keeps the owner's pid, no identity", "[ring_reader]") {
  test::TempDir dir;
  ScopedWriter w(dir / "ring", test::small_limits(4, 4));
  REQUIRE(w.attached());
  REQUIRE(w->claim(4242));
  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.status == RingStatus::ok);
  CHECK_FALSE(r.log.process.recorded);
  CHECK(r.log.process.pid == 4242);
  CHECK(r.log.process.rank == -1);
  CHECK(r.log.devices.empty());
}

// CUDA IPC and the mappings a program makes itself, as the parent reads them: an import in
// one process's ring joined with the exporter's allocation in another's, a fault in it
// named after both, the hand-overs that failed, and what the coverage says of memory the
// fence did not place.
#include <catch2/catch.hpp>

#include <algorithm>

#include "run/attribution.h"
#include "run/coverage.h"
#include "run/fence_records.h"
#include "run/ipc_records.h"
#include "run/judge.h"
#include "run/ring_text.h"
#include "ring_fixture.h"

using namespace cudadiag;
using namespace cudadiag::run;
using cudadiag::test::ScopedWriter;

namespace {

constexpr int kExporter = 1000;
constexpr int kImporter = 1003;
constexpr std::uint64_t kExporterBuffer = 0x7f00001ff060;  // fenced_event's placement of 4000 bytes
constexpr std::uint64_t kImported = 0x7e00001ff060;        // the same buffer in the importer

void exporter_ring(const std::filesystem::path& file) {
  ScopedWriter w(file, test::small_limits(8, 8));
  REQUIRE(w.attached());
  REQUIRE(w->claim(kExporter));
  w->set_cuda_seen();
  w->add_allocation(test::fenced_event(0x7f1000100000, 64));     // #0, not the one shared
  w->add_allocation(test::fenced_event(kExporterBuffer, 4000));          // #1
  w->add(&ring::Header::ipc_exports, 1);
}

// The importer: the exporter's #1 mapped against a guard of its own, one mapping the
// program made itself, a launch on the import, and a hand-over that failed.
void importer_ring(const std::filesystem::path& file, std::uint64_t origin_seq = 1) {
  ScopedWriter w(file, test::small_limits(8, 8));
  REQUIRE(w.attached());
  REQUIRE(w->claim(kImporter));
  w->set_cuda_seen();
  interposer::AllocationEvent import = test::fenced_event(kImported, 4000);
  import.api = ring::Api::cuIpcOpenMemHandle_v2;
  import.origin_pid = kExporter;
  import.origin_seq = origin_seq;
  w->add_allocation(import);
  w->add(&ring::Header::ipc_imports, 1);
  interposer::AllocationEvent mapped;
  mapped.address = 0x7d0000000000;
  mapped.bytes = 4u << 20;
  mapped.mapped_begin = mapped.address;
  mapped.mapped_end = mapped.address + mapped.bytes;
  mapped.api = ring::Api::cuMemMap;
  mapped.side = ring::Side::none;
  mapped.unfenced_reason = ring::Unfenced::program_mapped;
  mapped.device = 0;
  w->add_allocation(mapped);
  w->add(&ring::Header::program_mappings, 1);
  w->add_launch(test::launch_event(*w, "_Z7add_onePfi", kImported));
  interposer::IpcFailureEvent f;
  f.allocation_seq = 7;
  f.pid = kImporter;
  f.peer_pid = kExporter;
  f.result = 111;  // ECONNREFUSED
  f.step = ring::IpcStep::connect;
  w->add_ipc_failure(f);
}

}  // namespace

TEST_CASE("ipc records: an import is joined with the exporter's allocation; a fault in it names both", "[ipc_records]") {
  test::TempDir dir;
  const auto main_ring = dir / "fence-0.ring";
  exporter_ring(main_ring);
  importer_ring(dir / ("fence-0.ring." + std::to_string(kImporter)));
  const auto records = read_fence_records(main_ring);
  REQUIRE(records.pids() == std::vector<int>{kExporter, kImporter});

  // The Xid names the importer: its allocations, the import joined.
  const auto j = log_for_judging(records, kImporter);
  REQUIRE(j.log);
  CHECK(j.process == kImporter);
  REQUIRE(j.log->allocations.size() == 2);
  const AllocationRecord& import = j.log->allocations[0];
  CHECK(import.origin_pid == kExporter);
  CHECK(import.origin_seq == 1u);
  REQUIRE(import.import);
  CHECK(import.import->importer_pid == kImporter);
  CHECK(import.import->exporter_found);
  CHECK(import.import->bytes == 4000u);
  CHECK(import.import->api == "cuMemAlloc_v2");
  CHECK(import.import->side == FenceSide::back);
  CHECK_FALSE(j.log->allocations[1].import);  // the program's own mapping is no import

  // Counters of both processes; the importer's failed hand-over comes along.
  CHECK(j.log->summary.ipc_exports == 1u);
  CHECK(j.log->summary.ipc_imports == 1u);
  CHECK(j.log->summary.program_mappings == 1u);
  REQUIRE(j.log->ipc_failures.size() == 1);
  CHECK(ipc_failure_text(j.log->ipc_failures[0]) ==
        "CUDA IPC: process 1003 could not map process 1000's allocation #7: the exporting process could not be "
        "reached (result 111); the program got an error");
  CHECK(ipc_failure_line(j.log->ipc_failures[0]) ==
        "ipc_failure allocation_seq=7 pid=1003 peer_pid=1000 result=111 the exporting process could not be reached");

  // The Xid's page is the import's guard: past the end of the import, certain, and the
  // text names the importing process and the exporter's allocation.
  const auto a = attribute_fault(*j.log, kImported + 4000, AddressPrecision::page);
  CHECK(a.relation == Relation::past_end);
  CHECK(a.certain);
  REQUIRE(a.allocation);
  CHECK(a.allocation->seq == 0u);
  CHECK_THAT(a.summary, Catch::Contains("allocation #0 (4000 bytes at 0x7e00001ff060 from cuIpcOpenMemHandle_v2, "
                                        "fenced at its end; imported over CUDA IPC by process 1003 from process "
                                        "1000's allocation #1 (4000 bytes from cuMemAlloc_v2))"));
  CHECK_THAT(a.summary, Catch::Contains("kernel add_one(float*, int) (launch #0) was passed this allocation"));

  // Without the Xid's pid the exporter's own log is judged, where nothing was imported.
  const auto main_log = log_for_judging(records, std::nullopt);
  REQUIRE(main_log.log);
  CHECK(main_log.process == kExporter);
  CHECK(std::none_of(main_log.log->allocations.begin(), main_log.log->allocations.end(),
                     [](const AllocationRecord& r) { return r.import.has_value(); }));
}

TEST_CASE("ipc records: an exporter's record that is gone, and one whose ring is missing", "[ipc_records]") {
  test::TempDir dir;
  const auto main_ring = dir / "fence-0.ring";
  exporter_ring(main_ring);
  importer_ring(dir / ("fence-0.ring." + std::to_string(kImporter)), /*origin_seq=*/5);
  const auto j = log_for_judging(read_fence_records(main_ring), kImporter);
  REQUIRE(j.log);
  const AllocationRecord& import = j.log->allocations[0];
  REQUIRE(import.import);
  CHECK_FALSE(import.import->exporter_found);
  CHECK(mapping_origin_text(import) ==
        "imported over CUDA IPC by process 1003 from process 1000's allocation #5 (not in that process's records)");

  // The importer's ring alone (the exporter recorded elsewhere): still named by pid and seq.
  test::TempDir alone;
  importer_ring(alone / "fence-0.ring");
  const auto k = log_for_judging(read_fence_records(alone / "fence-0.ring"), std::nullopt);
  REQUIRE(k.log);
  CHECK_THAT(mapping_origin_text(k.log->allocations[0]),
             Catch::StartsWith("imported over CUDA IPC by process 1003 from process 1000's allocation #1"));
}

TEST_CASE("ipc records: a fault in memory the program mapped itself is named as such", "[ipc_records]") {
  AllocationRecord mapped;
  mapped.seq = 4;
  mapped.address = 0x7d0000000000;
  mapped.bytes = 4u << 20;
  mapped.mapped_begin = mapped.address;
  mapped.mapped_end = mapped.address + mapped.bytes;
  mapped.api = "cuMemMap";
  mapped.side = FenceSide::none;
  mapped.unfenced_reason = ring::unfenced_text(ring::Unfenced::program_mapped);
  CHECK(mapping_origin_text(mapped) == "memory the program mapped itself with cuMemMap, 4 MiB");
  InterposerLog log;
  log.allocations.push_back(mapped);
  const auto a = attribute_fault(log, mapped.address + 100, AddressPrecision::exact);
  CHECK(a.relation == Relation::inside_live);
  CHECK_THAT(a.summary, Catch::Contains("allocation #4 (4194304 bytes at 0x7d0000000000 from cuMemMap, not fenced; "
                                        "memory the program mapped itself with cuMemMap, 4 MiB)"));

  AllocationRecord driver_import = mapped;
  driver_import.api = "cuIpcOpenMemHandle_v2";
  driver_import.unfenced_reason = ring::unfenced_text(ring::Unfenced::ipc_imported);
  CHECK(mapping_origin_text(driver_import) ==
        "imported over CUDA IPC with the driver's own handle (its exporter had not fenced it), 4 MiB");
  AllocationRecord own;
  own.api = "cuMemAlloc_v2";
  CHECK(mapping_origin_text(own).empty());
  CHECK(size_text(4000) == "4000 bytes");
  CHECK(size_text(3u << 19) == "1.5 MiB");
  CHECK(size_text(2ull << 30) == "2 GiB");
}

TEST_CASE("ipc records: mappings the program made are recorded, no blind spot; guarded imports are coverage",
          "[ipc_records]") {
  InterposerLog log;
  log.summary.loaded = log.summary.cuda_seen = true;
  log.summary.side = FenceSide::back;
  log.summary.allocations = 3;
  log.summary.fenced = 2;
  log.summary.program_mappings = 2;
  log.summary.ipc_imports = 1;
  AllocationRecord mapped;
  mapped.side = FenceSide::none;
  mapped.unfenced_reason = ring::unfenced_text(ring::Unfenced::program_mapped);
  AllocationRecord unguarded = mapped;
  unguarded.unfenced_reason = ring::unfenced_text(ring::Unfenced::ipc_imported);
  log.allocations = {mapped, mapped, unguarded};
  const FenceReach r = fence_reach_of(log, true);
  CHECK(r.unfenced.empty());
  CHECK(r.program_mappings == 2u);
  CHECK(r.unguarded_imports == 1u);
  CHECK(r.ipc_imports == 1u);

  RunJudgement j;
  j.rung = Rung::fence;
  j.fence = FenceEffect{true, false, ""};
  j.fence_reach = r;
  const Coverage c = ladder_coverage({j});
  CHECK(c.unfenced.empty());  // no blind spot of the program's own allocations: a clean verdict can stand
  CHECK_FALSE(fence_blind_somewhere(c));
  const auto has = [](const std::vector<std::string>& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  CHECK(has(c.seen, "the same in the process that imported a fenced buffer over CUDA IPC (1 import(s)"));
  CHECK(has(c.unseen, "overruns of the 2 mapping(s) the program made itself with cuMemMap (NCCL's buffers, "
                      "PyTorch's expandable segments): recorded, not fenced"));
  CHECK(has(c.unseen, "overruns of the 1 buffer(s) imported over CUDA IPC that their exporter had not fenced"));
}

TEST_CASE("ipc records: a failed hand-over is a note of the fenced run", "[ipc_records]") {
  RunObservation obs;
  obs.rung = Rung::fence;
  obs.child.ending = runner::Ending::exit_code;
  obs.child.exit_code = 1;
  InterposerLog log;
  log.summary.loaded = log.summary.cuda_seen = true;
  IpcFailureRecord f;
  f.allocation_seq = 3;
  f.pid = 1000;
  f.result = 1;
  f.what = ring::ipc_step_text(ring::IpcStep::export_fd);
  log.ipc_failures.push_back(f);
  log.ipc_failures_lost = 2;
  obs.interposer = log;
  const RunJudgement j = judge_run(obs);
  const auto noted = [&](const std::string& line) {
    return std::find(j.fence_notes.begin(), j.fence_notes.end(), line) != j.fence_notes.end();
  };
  CHECK(noted("CUDA IPC: process 1000 could not hand out its fenced allocation #3: cuMemExportToShareableHandle "
              "refused the fenced buffer's memory (result 1); the program got the driver's answer for VMM memory"));
  CHECK(noted("CUDA IPC: 2 more hand-over(s) of fenced memory failed (not kept in the ring)"));
}

TEST_CASE("ipc records: a failure record that contradicts itself is dropped and counted", "[ipc_records]") {
  test::TempDir dir;
  const auto file = dir / "fence-0.ring";
  {
    ScopedWriter w(file, test::small_limits(8, 8));
    REQUIRE(w.attached());
    interposer::IpcFailureEvent f;
    f.step = ring::IpcStep::map;
    f.result = 2;
    w->add_ipc_failure(f);
    w->add_ipc_failure(f);
    w->header()->ipc_failure[1].step = static_cast<ring::IpcStep>(200);  // not a step
    for (int i = 0; i < 5; ++i) w->add_ipc_failure(f);                  // past what the header keeps
  }
  const RingRead r = read_ring(file);
  REQUIRE(r.readable());
  REQUIRE(r.log.ipc_failures.size() == 3);
  CHECK(r.log.ipc_failures[0].what == "cuMemMap failed");
  CHECK(r.log.ipc_failures_lost == 4u);  // the bad one, and three beyond the four kept
}

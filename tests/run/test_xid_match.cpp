// The kernel log's faulting processes matched once to the rings of a run: each process's
// Xid against its own allocations, its GPU found by bus id.
#include <catch2/catch.hpp>

#include <cstdio>

#include "run/run_verdict.h"
#include "run/to_result.h"
#include "run/xid_match.h"
#include "tests/run/run_fixtures.h"

using namespace cudadiag;
using namespace cudadiag::run;
using namespace cudadiag::run::testing;

namespace {

// An Xid 31 of `pid` on the GPU at `bus` ("0000:07:00", as the driver logs it), faulting
// on `page`; pid 0: a line without one.
host::XidEvent xid_line(int pid, const char* bus, std::uint64_t page) {
  char text[400];
  const std::string pid_part = pid > 0 ? "pid=" + std::to_string(pid) + ", name=python3, " : std::string();
  std::snprintf(text, sizeof text,
                "NVRM: Xid (PCI:%s): 31, %schannel 0x00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 "
                "GPCCLIENT_T1_4 faulted @ 0x%llx_%08llx. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE",
                bus, pid_part.c_str(), static_cast<unsigned long long>(page >> 32),
                static_cast<unsigned long long>(page & 0xffffffffULL));
  return *host::parse_xid_line(text);
}

AllocationRecord fenced_at(std::uint64_t seq, std::uint64_t mapped_begin, std::uint64_t bytes, int device) {
  AllocationRecord a;
  a.seq = seq;
  a.bytes = bytes;
  a.mapped_begin = mapped_begin;
  a.mapped_end = mapped_begin + (2u << 20);
  a.address = a.mapped_end - bytes;
  a.guard_begin = a.mapped_end;
  a.guard_end = a.mapped_end + (2u << 20);
  a.side = FenceSide::back;
  a.api = "cuMemAlloc_v2";
  a.device = device;
  return a;
}

// The ring of torchrun's rank `rank` (pid `pid`) on GPU `rank` at `bus` ("0000:07:00.0",
// as cuDeviceGetPCIBusId writes it). Both ranks' buffers lie at the same virtual
// addresses (each process has its own address space): 0x7f0000000000 and 0x7f0000600000,
// rank 0's of 4000 bytes (#7, #8), rank 1's of 16000 and 8000 (#2, #5).
ProcessRing rank_ring(int rank, int pid, const char* bus) {
  ProcessRing r;
  r.file = "ring." + std::to_string(pid);
  r.read.status = RingStatus::ok;
  r.read.owner_pid = pid;
  InterposerLog& log = r.read.log;
  log.summary.loaded = true;
  log.summary.cuda_seen = true;
  log.summary.allocations = log.summary.fenced = 2;
  log.summary.launches = 1;
  log.process.recorded = true;
  log.process.pid = pid;
  log.process.rank = rank;
  log.process.local_rank = rank;
  log.process.world_size = 2;
  log.process.rank_from = "RANK";
  log.process.exe = "/usr/bin/python3.12";
  DeviceIdentity d;
  d.ordinal = rank;
  d.uuid = "GPU-fa4e0000-0000-0000-0000-00000000000" + std::to_string(rank);
  d.pci_bus_id = bus;
  log.devices.push_back(d);
  if (rank == 0) {
    log.allocations = {fenced_at(7, 0x7f0000000000, 4000, 0), fenced_at(8, 0x7f0000600000, 4000, 0)};
  } else {
    log.allocations = {fenced_at(2, 0x7f0000000000, 16000, 1), fenced_at(5, 0x7f0000600000, 8000, 1)};
  }
  LaunchRecord l;
  l.seq = 3;
  l.kernel = rank == 0 ? "all_reduce_kernel" : "add_one";
  l.api = "cuLaunchKernel";
  l.device = rank;
  l.pointer_args = {log.allocations[0].address, log.allocations[1].address};
  log.launches.push_back(l);
  return r;
}

FenceRecords two_ranks() {
  FenceRecords records;
  records.rings.push_back(rank_ring(0, 1700, "0000:07:00.0"));
  records.rings.push_back(rank_ring(1, 1703, "0000:08:00.0"));
  return records;
}

// Rank 0 faults past its #8, rank 1 past its #2: pages only the right process's buffer
// explains (the other's buffers at the same addresses are #5 and #7).
constexpr std::uint64_t kRank0Page = 0x7f0000800000;
constexpr std::uint64_t kRank1Page = 0x7f0000200000;

RunJudgement judged(const std::vector<host::XidEvent>& xid, const FenceRecords& records) {
  RunObservation obs = exited(Rung::fence, 1, kIllegalAddress);
  obs.xid = xid;
  auto matched = match_rings(xid, records);
  obs.interposer = std::move(matched.log);
  obs.faults = std::move(matched.faults);
  return judge_run(obs);
}

}  // namespace

TEST_CASE("xid match: two faulting ranks, each Xid matched to its own process and GPU", "[xid_match]") {
  const auto records = two_ranks();
  // The driver names the bus without its function; the ring has the driver's spelling.
  const auto faults =
      match_faulting_processes({xid_line(1703, "0000:08:00", kRank1Page), xid_line(1700, "0000:07:00", kRank0Page),
                                xid_line(1703, "0000:08:00", kRank1Page + 0x1000)},
                               &records);
  REQUIRE(faults.size() == 2);
  CHECK(faults[0].pid == 1703);
  REQUIRE(faults[0].ring);
  CHECK(*faults[0].ring == 1);
  REQUIRE(faults[0].process);
  CHECK(faults[0].process->rank == 1);
  REQUIRE(faults[0].gpu);
  CHECK(faults[0].gpu->ordinal == 1);
  // One Xid per process: its first with an address.
  REQUIRE(faults[0].xid.mmu_fault);
  CHECK(faults[0].xid.mmu_fault->address == kRank1Page);
  CHECK(faults[1].pid == 1700);
  REQUIRE(faults[1].gpu);
  CHECK(faults[1].gpu->pci_bus_id == "0000:07:00.0");
  CHECK(primary_fault(faults) == &faults[0]);
}

TEST_CASE("xid match: each rank's address is placed among its own allocations only", "[xid_match]") {
  const auto records = two_ranks();
  const auto j = judged({xid_line(1700, "0000:07:00", kRank0Page), xid_line(1703, "0000:08:00", kRank1Page)}, records);
  REQUIRE(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.mmu_fault);
  CHECK(j.mmu_fault->address == kRank0Page);
  REQUIRE(j.attribution);
  REQUIRE(j.attribution->allocation);
  // Rank 0's page past its own #8; against rank 1's buffers it would be #5.
  CHECK(j.attribution->allocation->seq == 8);
  CHECK(j.attribution->allocation->bytes == 4000);
  CHECK(j.attribution->certain);
  REQUIRE(j.attribution->process);
  CHECK(j.attribution->process->pid == 1700);
  CHECK(owner_text(*j.attribution) == "rank 0 (pid 1700) on GPU 0 (0000:07:00.0)");
  // Rank 1's page past its own #2 (16000 bytes); against rank 0's it would be #7.
  REQUIRE(j.other_attributions.size() == 1);
  const Attribution& other = j.other_attributions[0];
  REQUIRE(other.allocation);
  CHECK(other.allocation->seq == 2);
  CHECK(other.allocation->bytes == 16000);
  CHECK(other.certain);
  CHECK(owner_text(other) == "rank 1 (pid 1703) on GPU 1 (0000:08:00.0)");
  CHECK_THAT(other.summary, Catch::Contains("the fault at 0x7f0000200000 (page) in rank 1 (pid 1703) on GPU 1 "
                                            "(0000:08:00.0) is between 0 and 4095 bytes past the end of allocation #2 "
                                            "(16000 bytes"));
  CHECK_THAT(j.reason, Catch::Contains("in rank 0 (pid 1700) on GPU 0 (0000:07:00.0) is between 0 and 4095 bytes past "
                                       "the end of allocation #8"));
  CHECK_THAT(j.reason, Catch::Contains("; and the fault at 0x7f0000200000 (page) in rank 1 (pid 1703)"));
  REQUIRE(j.faulting_processes.size() == 2);
  CHECK_FALSE(j.faulting_processes[1].log);  // the judgement keeps who, not their records
}

TEST_CASE("xid match: the run is judged by rank 1's ring when only rank 1 faulted", "[xid_match]") {
  const auto records = two_ranks();
  const auto matched = match_rings({xid_line(1703, "0000:08:00", kRank1Page)}, records);
  REQUIRE(matched.log);
  CHECK(matched.log->process.pid == 1703);
  CHECK(matched.log->processes_recorded == 2);
  CHECK(matched.log->summary.allocations == 4);  // counters over every process
  const auto j = judged({xid_line(1703, "0000:08:00", kRank1Page)}, records);
  REQUIRE(j.attribution);
  REQUIRE(j.attribution->allocation);
  CHECK(j.attribution->allocation->seq == 2);
  CHECK(j.other_attributions.empty());
  const RunVerdict v = decide_run_verdict({j}, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK_THAT(v.evidence, Catch::Contains("rank 1 (pid 1703) on GPU 1 (0000:08:00.0)"));

  // The report carries who, typed.
  const report::json d = report::to_json(to_result(exited(Rung::fence, 1), j).details);
  const auto& a = d["attribution"];
  CHECK(a["process"]["rank"] == 1);
  CHECK(a["process"]["pid"] == 1703);
  CHECK(a["process"]["world_size"] == 2);
  CHECK(a["process"]["local_rank"] == 1);
  CHECK(a["process"]["exe"] == "/usr/bin/python3.12");
  CHECK(a["gpu"]["ordinal"] == 1);
  CHECK(a["gpu"]["uuid"] == "GPU-fa4e0000-0000-0000-0000-000000000001");
  CHECK(a["gpu"]["pci_bus_id"] == "0000:08:00.0");
  CHECK(a["owner"] == "rank 1 (pid 1703) on GPU 1 (0000:08:00.0)");
  REQUIRE(d["faulting_processes"].size() == 1);
  CHECK(d["faulting_processes"][0]["pid"] == 1703);
  CHECK(d["faulting_processes"][0]["gpu"]["ordinal"] == 1);
}

TEST_CASE("xid match: a line without a pid belongs to the one process on its GPU", "[xid_match]") {
  const auto records = two_ranks();
  const auto faults = match_faulting_processes({xid_line(0, "0000:08:00", kRank1Page)}, &records);
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].pid == 1703);
  REQUIRE(faults[0].gpu);
  CHECK(faults[0].gpu->ordinal == 1);
  // Two processes on that GPU: nobody's.
  FenceRecords shared = two_ranks();
  shared.rings[1].read.log.devices[0].pci_bus_id = "0000:07:00.0";
  CHECK(match_faulting_processes({xid_line(0, "0000:07:00", kRank1Page)}, &shared).empty());
  // No rings (a rung without the fence): named by pid alone.
  const auto bare = match_faulting_processes({xid_line(1703, "0000:08:00", kRank1Page)}, nullptr);
  REQUIRE(bare.size() == 1);
  CHECK(bare[0].pid == 1703);
  CHECK_FALSE(bare[0].ring);
}

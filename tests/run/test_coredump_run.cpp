// GPU core dumps in `cudadiag run`: armed on every rung but the sanitizer's, the user's
// own settings respected, the dumps read into typed sites after each run (the fake
// driver writes real H100 dumps), a dump that proves a fault the program never saw, the
// hang trigger through the driver's pipe, the site first in the verdict, and its address
// placed among the fence's allocations.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "coredump/arming.h"
#include "run/hang_stop.h"
#include "run/judge.h"
#include "run/run_report.h"
#include "run/run_session.h"
#include "run/run_verdict.h"
#include "run/site_evidence.h"
#include "report/schema.h"
#include "ring_fixture.h"
#include "run_fixtures.h"

using namespace cudadiag;
using namespace cudadiag::run;
using namespace std::chrono_literals;

namespace {

std::string dump_data(const std::string& name) { return std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/" + name; }

RunOptions plan_options(const std::string& work) {
  RunOptions o;
  o.command = {"/bin/true"};
  o.work_dir = work;
  o.interposer_path = "/x/libcudadiag_fence.so";
  o.sanitizer_path = "/x/compute-sanitizer";
  o.sanitize = SanitizeMode::always;
  return o;
}

std::vector<std::string> dump_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".nvcudmp") out.push_back(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("coredump run: the rungs run unarmed; a failing rung's site run (not the sanitizer's) arms dumps into "
          "the scratch folder", "[coredump_run]") {
  const auto opts = plan_options("/scratch/run-x");
  const auto plans = plan_rungs(opts);
  REQUIRE(plans.size() == 5);  // native, blocking, fence, fence-front, sanitizer
  for (const auto& p : plans) {
    REQUIRE(p.runs.size() == 1);
    CAPTURE(to_string(p.rung));
    CHECK(p.runs[0].coredump_prefix.empty());
    CHECK(p.runs[0].env_set.count("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") == 0);
    if (p.rung == Rung::sanitizer) {
      CHECK_FALSE(wants_site_run(opts, p.rung));
      continue;
    }
    REQUIRE(wants_site_run(opts, p.rung));
    const PlannedRun armed = armed_for_site(p.runs[0], opts);
    const auto& env = armed.env_set;
    CHECK(armed.argv == p.runs[0].argv);
    if (!p.runs[0].ring_path.empty()) {  // its own ring: the failing run's stays as it was
      CHECK(armed.ring_path != p.runs[0].ring_path);
      CHECK(env.at("CUDADIAG_RING") == armed.ring_path);
    }
    CHECK(env.at("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") == "1");
    CHECK(env.at("CUDA_COREDUMP_FILE") ==
          "/scratch/run-x/core-" + std::string(to_string(p.rung)) + "-0_%p.nvcudmp");
    CHECK(env.at("CUDA_COREDUMP_GENERATION_FLAGS") ==
          "skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,"
          "skip_constbank_memory");
    CHECK(env.at("CUDA_ENABLE_USER_TRIGGERED_COREDUMP") == "1");
    CHECK(env.at("CUDA_COREDUMP_PIPE") == "/scratch/run-x/core-" + std::string(to_string(p.rung)) + "-0-pipe_%p");
    // The program's end is held for a dump still to come (a store's: fence/dump_linger.h),
    // by the interposer, preloaded with no fence and no ring where the rung has none.
    CHECK(env.at("CUDADIAG_DUMP_LINGER_MS") == "5000");
    CHECK_THAT(env.at("LD_PRELOAD"), Catch::StartsWith("/x/libcudadiag_fence.so"));
    // A fence rung runs without launch blocking when a site run follows a failure; the
    // site run blocks, so that its ring's newest launch is the faulting one.
    if (is_fence(p.rung)) {
      CHECK(p.runs[0].env_set.count("CUDA_LAUNCH_BLOCKING") == 0);
      CHECK(env.at("CUDA_LAUNCH_BLOCKING") == "1");
    } else {
      CHECK(env.count("CUDA_LAUNCH_BLOCKING") == p.runs[0].env_set.count("CUDA_LAUNCH_BLOCKING"));
    }
    if (!is_fence(p.rung)) {
      CHECK(env.at("CUDADIAG_FENCE_SIDE") == "none");
      CHECK(env.count("CUDADIAG_RING") == 0);
      CHECK(std::count(armed.env_unset.begin(), armed.env_unset.end(), "CUDADIAG_RING") == 1);
      CHECK(std::count(armed.env_unset.begin(), armed.env_unset.end(), "CUDADIAG_FENCE_SIDE") == 0);
      CHECK(p.runs[0].env_set.count("LD_PRELOAD") == 0);  // the rung's own runs stay as they were
    }
  }
  // Without the interposer there is nothing to hold the end of a rung that has none.
  auto bare = opts;
  bare.interposer_path.clear();
  const PlannedRun native = armed_for_site(plan_rungs(bare).front().runs[0], bare);
  CHECK(native.env_set.count("LD_PRELOAD") == 0);
}

TEST_CASE("coredump run: the user's own core-dump settings are kept; unarmed, nothing is armed", "[coredump_run]") {
  CHECK(coredump::user_coredump_variables({"PATH", "CUDA_COREDUMP_FILE", "CUDA_VISIBLE_DEVICES",
                                           "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_COREDUMP_FILE"}) ==
        std::vector<std::string>{"CUDA_COREDUMP_FILE", "CUDA_ENABLE_COREDUMP_ON_EXCEPTION"});
  auto o = plan_options("/w");
  o.user_coredump_vars = {"CUDA_COREDUMP_FILE"};
  CHECK_FALSE(wants_site_run(o, Rung::native));
  for (const auto& p : plan_rungs(o))
    for (const auto& r : p.runs) {
      CHECK(r.coredump_prefix.empty());
      for (const auto& [name, value] : r.env_set) CHECK_FALSE(coredump::is_coredump_variable(name));
      for (const auto& name : r.env_unset) CHECK_FALSE(coredump::is_coredump_variable(name));
    }
  o.user_coredump_vars.clear();
  o.coredump = false;
  CHECK_FALSE(wants_site_run(o, Rung::fence));
  for (const auto& p : plan_rungs(o))
    for (const auto& r : p.runs) {
      CHECK(r.env_set.count("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") == 0);
      // No site run to name the kernel: the fence rungs block, so that the ring's newest
      // launch is the faulting one.
      if (is_fence(p.rung)) CHECK(r.env_set.at("CUDA_LAUNCH_BLOCKING") == "1");
    }
}

TEST_CASE("coredump run: a proven address is placed among the fence's allocations", "[coredump_run]") {
  InterposerLog log;
  AllocationRecord a;
  a.seq = 3;
  a.address = 0x7f0000100000;
  a.bytes = 4096;
  a.mapped_begin = 0x7f0000000000;
  a.mapped_end = 0x7f0000101000;
  a.guard_begin = 0x7f0000101000;
  a.guard_end = 0x7f0000301000;
  a.side = FenceSide::back;
  log.allocations.push_back(a);
  AllocationRecord f = a;
  f.seq = 4;
  f.address = 0x7f0001000000;
  f.bytes = 8u << 20;
  f.mapped_begin = f.address;
  f.mapped_end = f.address + f.bytes;
  f.guard_begin = f.guard_end = 0;
  f.side = FenceSide::none;
  f.freed = true;
  log.allocations.push_back(f);
  AllocationRecord fr = a;
  fr.seq = 5;
  fr.address = 0x7f0002200000;
  fr.mapped_begin = fr.address;
  fr.mapped_end = fr.address + (2u << 20);
  fr.guard_begin = 0x7f0002000000;
  fr.guard_end = 0x7f0002200000;
  fr.side = FenceSide::front;
  log.allocations.push_back(fr);

  const auto place = [&](std::uint64_t address) {
    return placement_text(attribute_fault(log, address, AddressPrecision::exact));
  };
  CHECK(place(0x7f0000101004) == "4 bytes past the end of allocation #3 (4096 bytes)");
  CHECK(place(0x7f0001002200) == "8704 bytes into allocation #4 (8388608 bytes), freed before the launch");
  CHECK(place(0x7f00021ffff0) == "16 bytes before the start of allocation #5 (4096 bytes)");
  CHECK(place(0x100) == "a null pointer dereference");
  CHECK(place(0x10000000000) == "");  // near nothing: no placement
  // A page-precision attribution (the Xid's) never gives a byte.
  CHECK(placement_text(attribute_fault(log, 0x7f0000101000, AddressPrecision::page)).empty());

  std::vector<report::FaultSite> sites(1);
  sites[0].dump = "d";
  sites[0].exception = "Warp Illegal Address";
  sites[0].address_status = report::AddressStatus::proven;
  sites[0].address = 0x7f0000101004;
  host::MmuFault xid;
  xid.address = 0x7f0000101000;  // holds the byte: they agree
  CHECK(place_sites(sites, &log, xid).empty());
  CHECK(sites[0].placement == "4 bytes past the end of allocation #3 (4096 bytes)");
  xid.address = 0x7f0000400000;
  const auto lines = place_sites(sites, &log, xid);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("disagree") && Catch::Contains("0x7f0000400000") &&
                           Catch::Contains("0x7f0000101004"));
  // Not proven: nothing placed, nothing printed.
  sites[0].address_status = report::AddressStatus::not_recoverable;
  sites[0].address.reset();
  sites[0].placement.clear();
  CHECK(place_sites(sites, &log, xid).empty());
  CHECK(sites[0].placement.empty());
}

TEST_CASE("coredump run: a warp's exception is placed at the first lane whose address leaves every live allocation",
          "[coredump_run]") {
  // Seen on an H100 with an unmasked Triton store: the warp's first lane (thread 96) wrote
  // 3584 bytes into the 4000-byte buffer; lanes 122 on wrote past its end, onto the guard.
  InterposerLog log;
  AllocationRecord a;
  a.seq = 1;
  a.address = 0x7f0000100060;  // 4000 bytes, flush against the guard at 16-byte alignment
  a.bytes = 4000;
  a.mapped_begin = 0x7f0000000000;
  a.mapped_end = a.guard_begin = 0x7f0000101000;
  a.guard_end = 0x7f0000301000;
  a.side = FenceSide::back;
  log.allocations.push_back(a);
  std::vector<report::FaultSite> sites(1);
  auto& s = sites[0];
  s.exception = "Warp Illegal Address";
  s.address_status = report::AddressStatus::proven;
  s.block = report::Triple{0, 0, 0};
  s.thread = report::Triple{96, 0, 0};
  s.address = a.address + 3584;
  for (std::uint32_t t = 96; t < 128; ++t)
    s.lane_addresses.push_back({report::Triple{0, 0, 0}, report::Triple{t, 0, 0}, a.address + 3584 + 16 * (t - 96)});
  CHECK(place_sites(sites, &log, std::nullopt).empty());
  // Thread 122 writes at 3584 + 16 * 26 = 4000: the first byte past the end.
  CHECK(s.placement == "0 bytes past the end of allocation #1 (4000 bytes)");
  REQUIRE(s.thread);
  CHECK(*s.thread == report::Triple{122, 0, 0});
  CHECK(s.address == a.address + 4000);
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::Contains("its first lane, thread (96,0,0)") && Catch::Contains("thread (122,0,0)"));

  // Every lane inside the buffer: the first lane's placement stands, and the site says it may not be the fault.
  s.thread = report::Triple{96, 0, 0};
  s.address = a.address + 3584;
  s.notes.clear();
  s.lane_addresses.resize(2);
  place_sites(sites, &log, std::nullopt);
  CHECK(s.placement == "3584 bytes into live allocation #1 (4000 bytes)");
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::StartsWith("every lane's proven address lies inside a live allocation"));
}

// A fenced run of scale(float*, int) that exited 1 with PyTorch's illegal-address text:
// one 4096-byte buffer against its guard, one launch passed it.
static RunObservation fenced_scale_run() {
  RunObservation obs;
  obs.rung = Rung::fence;
  obs.child.ending = runner::Ending::exit_code;
  obs.child.exit_code = 1;
  obs.child.err.head = "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  obs.child.err.total_bytes = obs.child.err.head.size();
  InterposerLog log;
  log.summary.loaded = log.summary.cuda_seen = true;
  AllocationRecord a;
  a.seq = 0;
  a.address = 0x7f0000100000;
  a.bytes = 4096;
  a.mapped_begin = 0x7f0000000000;
  a.mapped_end = a.guard_begin = 0x7f0000101000;
  a.guard_end = 0x7f0000301000;
  a.side = FenceSide::back;
  log.allocations.push_back(a);
  log.summary.allocations = log.summary.fenced = 1;
  LaunchRecord l;
  l.kernel = "scale(float*, int)";
  l.pointer_args = {a.address};
  log.launches.push_back(l);
  obs.interposer = log;
  return obs;
}

namespace {

// A dump's proven 4-byte write by thread (3,0,0) of block (1,0,0) in scale() at scale.cu:7.
report::FaultSite scale_write_site(const std::string& dump, std::uint64_t address) {
  report::FaultSite s;
  s.dump = dump;
  s.exception = "Warp Illegal Address";
  s.exception_id = report::ExceptionKind::warp_illegal_address;
  s.kernel = "scale(float*, int)";
  s.file = "scale.cu";
  s.line = 7;
  s.block = report::Triple{1, 0, 0};
  s.thread = report::Triple{3, 0, 0};
  s.address_status = report::AddressStatus::proven;
  s.access = report::AccessKind::write;
  s.access_bytes = 4;
  s.address = address;
  return s;
}

}  // namespace

TEST_CASE("coredump run: the dump is the first evidence, above the Xid page and the launch log", "[coredump_run]") {
  RunObservation obs = fenced_scale_run();
  obs.sites = {scale_write_site("core-fence-0_7.nvcudmp", 0x7f0000101008)};
  obs.coredump_armed = true;
  const auto j = judge_run(obs);
  CHECK(j.outcome == RunOutcome::cuda_error);
  CHECK_FALSE(j.error_unseen_by_program);
  REQUIRE(j.sites.size() == 1);
  CHECK(j.sites[0].placement == "8 bytes past the end of allocation #0 (4096 bytes)");
  // The dump's byte replaces the page in the fence's attribution too.
  REQUIRE(j.attribution);
  CHECK(j.attribution->precision == AddressPrecision::exact);
  CHECK(j.attribution->distance_min == 8);
  const auto v = decide_run_verdict({j}, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(v.evidence ==
        "fence: GPU core dump: Warp Illegal Address in scale(float*, int) at scale.cu:7, thread (3,0,0) of block "
        "(1,0,0): wrote 4 bytes at 0x7f0000101008: 8 bytes past the end of allocation #0 (4096 bytes)");
}

TEST_CASE("coredump run: a dump that names no kernel (the store's warp had moved on) ranks below other evidence",
          "[coredump_run]") {
  RunObservation obs = fenced_scale_run();
  report::FaultSite s;
  s.dump = "core-fence-0_8.nvcudmp";
  s.exception = "Warp Illegal Address";
  s.exception_id = report::ExceptionKind::warp_illegal_address;
  s.notes = {"SM 130 reports the exception, but no warp is left on it and no grid is running"};
  obs.sites = {s};
  obs.coredump_armed = true;
  const auto j = judge_run(obs);
  CHECK(j.outcome == RunOutcome::cuda_error);
  const auto v = decide_run_verdict({j}, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK_THAT(v.evidence, Catch::StartsWith("fence: GPU core dump: Warp Illegal Address") &&
                             Catch::Contains("(the dump could not place it: the faulting warp had moved on)") &&
                             Catch::EndsWith("the last kernel launched: scale(float*, int)"));
}

TEST_CASE("coredump run: a store's site from the SM's error PC comes first with kernel and line, the kernel "
          "log's page after it", "[coredump_run]") {
  RunObservation obs = fenced_scale_run();
  obs.xid.push_back(run::testing::xid31(0x7f0000101000));
  report::FaultSite s;  // what guard_write's dump gives (tests/coredump/test_fault_site.cpp)
  s.dump = "core-fence-0_9.nvcudmp";
  s.exception = "Warp Illegal Address";
  s.exception_id = report::ExceptionKind::warp_illegal_address;
  s.kernel = "scale(float*, int)";
  s.function = s.kernel;
  s.file = "scale.cu";
  s.line = 7;
  s.instruction = "STG.E desc[UR4][R2.64], R7";
  s.access = report::AccessKind::write;
  s.access_bytes = 4;
  s.thread_note = "not known: the faulting warp had left SM 126 before the dump, and the SM records no thread";
  obs.sites = {s};
  const auto j = judge_run(obs);
  REQUIRE(j.attribution);
  REQUIRE(j.attribution->allocation);
  const auto v = decide_run_verdict({j}, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK_THAT(v.reason, Catch::StartsWith("exposed by the fence rung (1/1 runs): fence: GPU core dump: Warp Illegal "
                                         "Address in scale(float*, int) at scale.cu:7: a 4-byte store, thread not "
                                         "known: the faulting warp had left SM 126"));
  CHECK_THAT(v.reason, Catch::Contains("; the fault at 0x7f0000101000 (page) is between 0 and 4095 bytes past the end "
                                       "of allocation #0"));
}

TEST_CASE("coredump run: a native run's site leads, and the buffer a fence rung placed the fault in follows it",
          "[coredump_run]") {
  RunObservation native;
  native.rung = Rung::native;
  native.child.ending = runner::Ending::exit_code;
  native.child.exit_code = 1;
  native.child.err.head = "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n";
  native.sites = {scale_write_site("core-native-0_5.nvcudmp", 0x7fedf9800180)};
  RunObservation fenced = fenced_scale_run();
  fenced.xid.push_back(run::testing::xid31(0x7f0000101000));
  const auto jn = judge_run(native);
  const auto jf = judge_run(fenced);
  REQUIRE(jf.attribution);
  REQUIRE(jf.attribution->allocation);
  const auto v = decide_run_verdict({jn, jf}, {});
  CHECK(v.kind == VerdictKind::exposed);
  CHECK(v.evidence_run == 0u);
  CHECK_THAT(v.evidence, Catch::StartsWith("native: GPU core dump: Warp Illegal Address in scale(float*, int) at "
                                           "scale.cu:7") &&
                             Catch::Contains("; the fence rung places it: the fault at 0x7f0000101000 (page) is "
                                             "between 0 and 4095 bytes past the end of allocation #0"));
  // The run's own allocation is not repeated from another rung.
  const auto own = decide_run_verdict({jf}, {});
  CHECK_THAT(own.evidence, !Catch::Contains("places it"));
}

TEST_CASE("coredump run: a dump proves a fault the program never saw (it exited 0)", "[coredump_run]") {
  RunObservation obs;
  obs.rung = Rung::native;
  obs.child.ending = runner::Ending::no_result;
  obs.child.exit_code = 0;
  report::FaultSite s;
  s.dump = "core-native-0_9.nvcudmp";
  s.exception = "Warp Misaligned Address";
  s.exception_id = report::ExceptionKind::warp_misaligned_address;
  s.kernel = "load4(float4 const*)";
  obs.sites = {s};
  obs.coredump_armed = true;
  const auto j = judge_run(obs);
  CHECK(j.outcome == RunOutcome::cuda_error);
  CHECK(j.error_unseen_by_program);
  REQUIRE(j.error);
  CHECK(j.error->source == EvidenceSource::coredump);
  CHECK(j.error->error_class == cudadiag::taxonomy::ErrorClass::misaligned);
  CHECK(j.error->code == 716);
  CHECK_THAT(j.reason, Catch::Contains("the GPU core dump") && Catch::Contains("exited 0") &&
                           Catch::Contains("the program did not see the error"));
  // Without the dump the same run is clean: the dump alone made the difference.
  obs.sites.clear();
  CHECK(judge_run(obs).outcome == RunOutcome::clean);
}

TEST_CASE("coredump run: dumps are read, removed or kept, and bounded in size", "[coredump_run]") {
  test::TempDir dir;
  const std::string work = (dir / "work").string();
  const std::string keep = (dir / "keep").string();
  std::filesystem::create_directories(work);
  std::filesystem::create_directories(keep);
  const coredump::DumpNames names{work, "core-native-0"};
  std::filesystem::copy_file(dump_data("slim/use_after_free.nvcudmp"), work + "/core-native-0_123.nvcudmp");
  std::filesystem::copy_file(dump_data("slim/far_write.nvcudmp"), work + "/core-native-0_124.nvcudmp");
  std::filesystem::copy_file(dump_data("slim/far_write.nvcudmp"), work + "/core-native-1_125.nvcudmp");  // another run's
  { std::ofstream(work + "/core-native-0_126.nvcudmp") << "not a dump"; }
  REQUIRE(::symlink("/etc/passwd", (work + "/core-native-0_127.nvcudmp").c_str()) == 0);  // never read
  REQUIRE(coredump::find_dumps(names).size() == 3);

  coredump::CollectOptions opts;
  opts.keep_dir = keep;
  opts.no_disassembler_reason = "none in the test";
  auto got = coredump::collect_dumps(names, opts);
  REQUIRE(got.sites.size() == 3);
  CHECK(got.sites[0].exception == "Warp Illegal Address");
  CHECK(got.sites[0].kernel.find("touch") != std::string::npos);
  CHECK(got.sites[0].dump_bytes == std::filesystem::file_size(dump_data("slim/use_after_free.nvcudmp")));
  CHECK(got.sites[0].kept);
  CHECK(got.sites[0].dump == keep + "/core-native-0_123.nvcudmp");
  CHECK(got.sites[0].read_ms > 0.0);
  CHECK(got.sites[0].address_status == report::AddressStatus::not_attempted);
  CHECK_THAT(got.sites[0].address_note, Catch::Contains("none in the test"));
  CHECK(got.sites[1].exception == "Warp Illegal Address");
  CHECK_THAT(got.sites[2].unreadable, Catch::StartsWith("unreadable dump"));
  CHECK(std::filesystem::exists(keep + "/core-native-0_124.nvcudmp"));
  auto left = dump_files(work);  // the link and the other run's dump stay
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"core-native-0_127.nvcudmp", "core-native-1_125.nvcudmp"});

  // Beyond the limit: not read, not kept, said so.
  std::filesystem::copy_file(dump_data("slim/far_write.nvcudmp"), work + "/core-native-0_200.nvcudmp");
  opts.max_bytes = 1000;
  got = coredump::collect_dumps(names, opts);
  REQUIRE(got.sites.size() == 1);
  CHECK_THAT(got.sites[0].unreadable, Catch::Contains("more than the 1000 bytes"));
  REQUIRE(got.notes.size() == 1);
  CHECK_THAT(got.notes[0], Catch::Contains("not read and not kept"));
  CHECK_FALSE(std::filesystem::exists(keep + "/core-native-0_200.nvcudmp"));
  CHECK_FALSE(std::filesystem::exists(work + "/core-native-0_200.nvcudmp"));
}

TEST_CASE("coredump run: the hang trigger writes only into FIFOs, never blocking", "[coredump_run]") {
  test::TempDir dir;
  const std::string work = (dir / "w").string();
  std::filesystem::create_directories(work);
  const coredump::DumpNames names{work, "core-native-0"};
  REQUIRE(::mkfifo((work + "/core-native-0-pipe_77").c_str(), 0600) == 0);  // no reader
  { std::ofstream(work + "/core-native-0-pipe_78") << ""; }                // a regular file
  REQUIRE(::mkfifo((work + "/core-other-pipe_79").c_str(), 0600) == 0);
  const auto pipes = coredump::find_pipes(names);
  REQUIRE(pipes == std::vector<std::string>{work + "/core-native-0-pipe_77"});
  CHECK(coredump::trigger_pipes(pipes).empty());  // no reader: ENXIO at once, no wait
  CHECK(std::filesystem::file_size(work + "/core-native-0-pipe_78") == 0);
}

#if defined(STATIC_RUNTIME) && defined(FAKE_DRIVER_DIR)
namespace {

SessionOptions fake_session(const test::TempDir& dir, const std::string& mode, const std::string& rungs) {
  SessionOptions o;
  o.run.command = {STATIC_RUNTIME, mode};
  o.run.rungs = parse_rungs(rungs);
  o.run.work_dir = (dir / "work").string();
  std::filesystem::create_directories(o.run.work_dir);
#ifdef INTERPOSER
  o.run.interposer_path = INTERPOSER;
#endif
  o.run.sanitizer_missing_reason = "no compute-sanitizer in the tests";
  o.env = {{"LD_LIBRARY_PATH", FAKE_DRIVER_DIR}};
  o.timeout = 20s;
  o.grace = 1s;
  o.kernel_log.clear();  // as with --no-kernel-log: the dump needs no kernel log
  o.no_disassembler_reason = "no nvdisasm in the test";
  return o;
}

}  // namespace

TEST_CASE("coredump run: end to end, a far write is located by the dump of its site run, the driver aborting that "
          "run", "[coredump_run]") {
  test::TempDir dir;
  auto o = fake_session(dir, "clean", "native,blocking");
  o.env["FAKE_CUDA_FAULT"] = "1";
  o.env["FAKE_CUDA_COREDUMP_FROM"] = dump_data("slim/far_write.nvcudmp");
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 2);  // site runs are not runs of the ladder
  for (const auto& r : out.runs) {
    // The verdict's run is unarmed: the program saw its error and exited 1. Its site
    // run was armed and aborted by the driver after the dump (no skip_abort).
    CHECK(r.observation.child.exit_code == 1);
    CHECK_FALSE(r.observation.coredump_armed);
    CHECK(r.observation.site_run_outcome == "cuda_error");
    CHECK_FALSE(r.judgement.error_unseen_by_program);
    CHECK(r.judgement.outcome == RunOutcome::cuda_error);
    REQUIRE_FALSE(r.judgement.site_notes.empty());
    CHECK_THAT(r.judgement.site_notes.front(), Catch::StartsWith("the site comes from a second run of this rung"));
    REQUIRE(r.judgement.sites.size() == 1);
    CHECK(r.judgement.sites[0].exception == "Warp Illegal Address");
    CHECK(r.judgement.sites[0].dump_bytes == std::filesystem::file_size(dump_data("slim/far_write.nvcudmp")));
  }
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK_THAT(out.verdict.evidence, Catch::StartsWith("native: GPU core dump: Warp Illegal Address in "));
  CHECK(dump_files(dir / "work").empty());  // removed once read

  run::RunFacts facts;
  const auto rep = run_report(report::new_report({"cudadiag", "run"}, "run"), o, out, facts);
  CHECK(report::validate_report(report::to_json(rep)).empty());
  REQUIRE(rep.results.size() == 2);
  REQUIRE(rep.results[0].fault_sites.size() == 1);
  const report::Fields* run = rep.extra.fields_of("run");
  REQUIRE(run);
  const report::Fields* coredump = run->fields_of("coredump");
  REQUIRE(coredump);
  CHECK(coredump->bool_or("armed", false));
  CHECK_THAT(coredump->string_or("skip_abort", ""), Catch::StartsWith("no skip_abort"));
  CHECK_THAT(rep.verdict.reasons.front(), Catch::Contains("GPU core dump"));

  // Unarmed (--no-coredump): no dump, no site; the program sees its error again.
  o.run.coredump = false;
  const auto unarmed = run_session(o);
  for (const auto& r : unarmed.runs) {
    CHECK(r.judgement.sites.empty());
    CHECK_FALSE(r.judgement.error_unseen_by_program);
    CHECK(r.observation.child.exit_code == 1);
  }
}

TEST_CASE("coredump run: a guard fault under the fence writes a dump; --keep-dumps keeps it", "[coredump_run]") {
  test::TempDir dir;
  auto o = fake_session(dir, "kernel-overrun", "fence");
  o.env["FAKE_CUDA_COREDUMP_FROM"] = dump_data("slim/use_after_free.nvcudmp");
  std::filesystem::create_directories(dir / "kept");
  o.keep_dumps = (dir / "kept").string();
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 1);
  const auto& j = out.runs[0].judgement;
  CHECK(j.outcome == RunOutcome::cuda_error);  // the launch returned 700 instead of dying of SIGSEGV
  REQUIRE(j.sites.size() == 1);
  CHECK(j.sites[0].kept);
  CHECK(dump_files(dir / "kept").size() == 1);
  CHECK(dump_files(dir / "work").empty());
}

TEST_CASE("coredump run: a driver that writes no dump is said so, and the rest still works", "[coredump_run]") {
  test::TempDir dir;
  auto o = fake_session(dir, "clean", "native");
  o.run.command = {"/bin/sh", "-c", "echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2; exit 1"};
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 1);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::cuda_error);
  CHECK(out.runs[0].judgement.sites.empty());
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK(std::any_of(out.verdict.notes.begin(), out.verdict.notes.end(),
                    [](const std::string& n) { return n.find("the driver wrote none") != std::string::npos; }));
}

TEST_CASE("coredump run: a hang is asked for a dump through the driver's pipe before it is ended", "[coredump_run]") {
  test::TempDir dir;
  auto o = fake_session(dir, "clean", "native");
  o.timeout = 1s;
  o.env["FAKE_CUDA_HANG"] = "1";
  o.env["FAKE_CUDA_HANG_DUMP_FROM"] = dump_data("hang.nvcudmp");
  o.env["FAKE_CUDA_PIPE_BYTES"] = "1048576";  // the driver acts on 1 MiB; a byte may sit in the buffer
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 1);
  const auto& j = out.runs[0].judgement;
  CHECK(j.outcome == RunOutcome::timeout);
  REQUIRE(j.sites.size() == 1);
  const auto& s = j.sites[0];
  CHECK(s.unreadable.empty());
  CHECK(s.exception.empty());
  CHECK(s.dump_bytes == std::filesystem::file_size(dump_data("hang.nvcudmp")));  // complete, not a half
  REQUIRE_FALSE(s.waiting.empty());
  CHECK_THAT(s.waiting[0].function, Catch::StartsWith("wait_flag"));
  CHECK(s.waiting[0].file.find("hang.cu") != std::string::npos);
  CHECK(s.waiting[0].line == 4u);
  CHECK(s.waiting[0].warps >= 1u);
  CHECK_THAT(j.reason, Catch::Contains("at the deadline") && Catch::Contains("hang.cu:4"));
  CHECK(out.runs[0].observation.child.wall_ms < 15000);
}

TEST_CASE("coredump run: a hang named by the first rung's dump stops the ladder, and asked-for rungs still run",
          "[coredump_run]") {
  test::TempDir dir;
  auto o = fake_session(dir, "clean", "native,blocking,fence");
  o.timeout = 1s;
  o.env["FAKE_CUDA_HANG"] = "1";
  o.env["FAKE_CUDA_HANG_DUMP_FROM"] = dump_data("hang.nvcudmp");
  o.env["FAKE_CUDA_PIPE_BYTES"] = "1048576";
  // As by default (no --rungs, --sanitize auto): one rung and its site run, then the stop.
  const auto out = run_session(o);
  REQUIRE(out.runs.size() == 1);
  CHECK(out.runs[0].judgement.rung == Rung::native);
  CHECK(out.runs[0].judgement.outcome == RunOutcome::timeout);
  CHECK_THAT(named_hang(out.runs[0].judgement), Catch::StartsWith("wait_flag(int volatile*) at ") &&
                                                     Catch::Contains("hang.cu:4"));
  REQUIRE(out.skipped.size() == 2);
  for (const auto& s : out.skipped) {
    CHECK(s.after_named_hang);
    CHECK_THAT(s.reason, Catch::StartsWith("the hang is named (wait_flag(int volatile*) at "));
  }
  CHECK(out.verdict.kind == VerdictKind::exposed);
  CHECK_THAT(out.verdict.reason, Catch::StartsWith("a GPU hang: native: a kernel never finished: its warps wait in "
                                                   "wait_flag(int volatile*) at ") &&
                                     Catch::Contains("hang.cu:4") &&
                                     Catch::EndsWith("the rungs above were not run: the hang is named"));
  // The report says it in its ladder, and renders.
  run::RunFacts facts;
  const auto rep = run_report(report::new_report({"cudadiag", "run"}, "run"), o, out, facts);
  CHECK(report::validate_report(report::to_json(rep)).empty());
  CHECK_THAT(rep.verdict.reasons.front(), Catch::Contains("hang.cu:4"));

  // --rungs given: every rung asked for runs, each to its own deadline.
  o.run.rungs_asked = true;
  const auto asked = run_session(o);
  CHECK(asked.runs.size() == 3);
  CHECK(asked.skipped.empty());
  CHECK(asked.verdict.kind == VerdictKind::exposed);
}
#endif

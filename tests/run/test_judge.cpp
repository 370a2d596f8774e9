#include <catch2/catch.hpp>

#include <string>

#include "run/judge.h"
#include "run_fixtures.h"

using namespace cudadiag::run;
using namespace cudadiag::run::testing;

TEST_CASE("exit 0 with nothing in the output is clean") {
  const auto j = judge_run(exited(Rung::native, 0, "", "loss 0.31\n"));
  CHECK(j.outcome == RunOutcome::clean);
  CHECK_FALSE(j.failed());
  CHECK(j.exit_code == 0);
  CHECK(j.reason == "exited 0 with no CUDA error in its output or the kernel log");
  CHECK(status_of(j).started);
  CHECK_FALSE(status_of(j).failed);
}

TEST_CASE("a CUDA error in the output wins over how the process ended") {
  auto j = judge_run(exited(Rung::native, 1, kIllegalAddress));
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.error);
  CHECK(j.error->code == 700);
  CHECK(j.error->source == EvidenceSource::output);
  CHECK(j.error->framework == Framework::pytorch);
  CHECK(j.reason == "cudaErrorIllegalAddress (memory_fault) in its output, stderr line 1 (pytorch), exited with 1");
  CHECK(j.failed());

  // Printed and swallowed: exit 0 is still a CUDA error.
  j = judge_run(exited(Rung::blocking, 0, "", "warning: CUDA error: misaligned address, retrying\n"));
  CHECK(j.outcome == RunOutcome::cuda_error);
  CHECK(j.error->code == 716);

  // Then hung until the deadline.
  auto o = exited(Rung::native, 0, kIllegalAddress);
  o.child.ending = cudadiag::runner::Ending::timeout;
  o.child.exit_code.reset();
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  CHECK(j.reason.find("then ran past its deadline") != std::string::npos);

  // Killed by SIGABRT after "terminate called ... c10::Error".
  j = judge_run(killed(Rung::native, 6, "SIGABRT",
                       "terminate called after throwing an instance of 'c10::Error'\n"
                       "  what():  CUDA error: unspecified launch failure\n"));
  CHECK(j.outcome == RunOutcome::cuda_error);
  CHECK(j.error->code == 719);
  CHECK(j.reason.find("killed by SIGABRT") != std::string::npos);
}

TEST_CASE("signals, exit codes and timeouts without a CUDA error") {
  auto j = judge_run(killed(Rung::native, 11, "SIGSEGV"));
  CHECK(j.outcome == RunOutcome::crashed);
  CHECK(j.signal == 11);
  CHECK(j.reason == "killed by SIGSEGV with no CUDA error in its output or the kernel log");

  j = judge_run(exited(Rung::native, 3, "ValueError: bad shape\n"));
  CHECK(j.outcome == RunOutcome::exit_code);
  CHECK(j.exit_code == 3);

  // A shell between us and the program reports the program's signal.
  j = judge_run(exited(Rung::native, 139, "run.sh: line 2:  5150 Segmentation fault      (core dumped) ./app\n"));
  CHECK(j.outcome == RunOutcome::crashed);
  CHECK(j.signal_name == "SIGSEGV");
  CHECK(j.signal == 11);
  // The same text with a small exit code is only the program's exit.
  j = judge_run(exited(Rung::native, 1, "Segmentation fault in worker 3, restarting\n"));
  CHECK(j.outcome == RunOutcome::exit_code);

  auto o = exited(Rung::native, 0);
  o.child.ending = cudadiag::runner::Ending::timeout;
  o.child.exit_code.reset();
  o.child.killed_after_grace = true;
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::timeout);
  CHECK(j.reason.find("ignored SIGTERM") != std::string::npos);
}

TEST_CASE("commands that do not start") {
  auto o = exited(Rung::native, 0);
  o.child.ending = cudadiag::runner::Ending::spawn_failed;
  o.child.exit_code.reset();
  o.child.spawn_error = "No such file or directory";
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::does_not_start);
  CHECK(j.reason == "the command did not start: No such file or directory");
  CHECK_FALSE(status_of(j).started);

  j = judge_run(exited(Rung::native, 127, "sh: 1: trian.py: not found\n"));
  CHECK(j.outcome == RunOutcome::does_not_start);
  CHECK(j.reason == "the command did not start (exit 127): sh: 1: trian.py: not found");
  j = judge_run(exited(Rung::native, 126));
  CHECK(j.outcome == RunOutcome::does_not_start);
  j = judge_run(exited(Rung::native, 2, "python3: can't open file '/w/x.py': [Errno 2] No such file or directory\n"));
  CHECK(j.outcome == RunOutcome::does_not_start);
  // 127 after a CUDA error is the CUDA error.
  j = judge_run(exited(Rung::native, 127, kIllegalAddress));
  CHECK(j.outcome == RunOutcome::cuda_error);
}

TEST_CASE("Xid lines of the pid are evidence even when the program says nothing") {
  auto o = exited(Rung::native, 1, "Traceback ...\nValueError: NaN in loss\n");
  o.xid.push_back(xid31(0x7f3c1f600000, "ACCESS_TYPE_VIRT_READ"));
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.error);
  CHECK(j.error->source == EvidenceSource::xid);
  CHECK(j.error->name == "Xid 31");
  CHECK(j.error->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  REQUIRE(j.mmu_fault);
  CHECK(j.mmu_fault->address == 0x7f3c1f600000ULL);
  CHECK(j.mmu_fault->access == cudadiag::host::MmuAccess::read);
  CHECK(j.reason.find("the kernel log") != std::string::npos);

  // Machine Xids are kept apart.
  o = exited(Rung::native, 0);
  o.xid.push_back(*cudadiag::host::parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus."));
  j = judge_run(o);
  CHECK(j.machine_xids == std::vector<int>{79});
}

TEST_CASE("fence rung: attribution from Xid 31 and the interposer's log") {
  auto o = exited(Rung::fence, 1, kIllegalAddress);
  o.interposer = fenced_log();
  o.xid.push_back(xid31(0x7f0000200000));
  const auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.fence);
  CHECK(j.fence->effective);
  REQUIRE(j.attribution);
  CHECK(j.attribution->relation == Relation::past_end);
  CHECK(j.attribution->certain);
  CHECK(j.attribution->allocation->seq == 7);
  CHECK(j.attribution->distance_min == 0);
  CHECK(j.attribution->suspect->kernel == "index_select_kernel");
  CHECK_FALSE(j.fence_suspicion);
}

TEST_CASE("fence rung: a fault the program never waited for is found by the fence's wait at its end") {
  auto o = exited(Rung::fence, 0);
  o.interposer = fenced_log();
  o.interposer->summary.end_wait_result = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS
  o.xid.push_back(xid31(0x7f0000200000));
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);  // the Xid names it first; the run is not clean
  o.xid.clear();
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.error);
  CHECK(j.error->source == EvidenceSource::end_wait);
  CHECK(j.error->name == "cudaErrorIllegalAddress");
  CHECK(j.error->driver_name == "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(j.reason.find("in the fence's wait at the program's end") != std::string::npos);
  // A wait that failed for another reason (out of memory) is not the program's GPU fault.
  o.interposer->summary.end_wait_result = 2;
  CHECK(judge_run(o).outcome == RunOutcome::clean);
  o.interposer->summary.end_wait_result = 0;
  CHECK(judge_run(o).outcome == RunOutcome::clean);
}

TEST_CASE("fence rung: clean only when the fence could see; the preload failure is named") {
  auto o = exited(Rung::fence, 0);
  o.interposer = fenced_log();
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::clean);
  CHECK(j.reason.find("fence: 2 of 2 allocations fenced") != std::string::npos);

  o.interposer = pool_log();  // two slabs, a hundred thousand launches on pieces of them: a pool
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::fence_not_effective);
  CHECK_FALSE(j.failed());
  CHECK(j.reason.find("sub-allocates from a pool") != std::string::npos);

  o = exited(Rung::fence, 0,
             "ERROR: ld.so: object '/opt/cd/libcudadiag_fence.so' from LD_PRELOAD cannot be preloaded "
             "(wrong ELF class: ELFCLASS64): ignored.\n");
  o.interposer_error = "no ring file";
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::fence_not_effective);
  CHECK(j.reason.find("ld.so could not preload the interposer") != std::string::npos);

  o = exited(Rung::fence, 0);
  o.interposer_error = "/tmp/r/fence-0.ring: no such file";
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::fence_not_effective);
  CHECK(j.reason.find("left no record: /tmp/r/fence-0.ring") != std::string::npos);
}

TEST_CASE("fence rung: a program that never used CUDA is clean, unless ld.so refused the interposer") {
  auto o = exited(Rung::fence, 0);
  InterposerLog log;
  log.summary.loaded = true;  // the constructor ran; no driver entry point was resolved
  o.interposer = log;
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::clean);
  CHECK(j.reason == "exited 0 and never used CUDA: nothing to fence");
  REQUIRE(j.fence);
  CHECK(j.fence->cuda_unused);

  // Loaded in a shell, refused by ld.so in the program it started: not known to be CUDA-free.
  o.child.err = capture("ERROR: ld.so: object '/opt/cd/libcudadiag_fence.so' from LD_PRELOAD cannot be preloaded "
                        "(wrong ELF class: ELFCLASS64): ignored.\n");
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::fence_not_effective);

  // Failing without using CUDA is the program's own failure, not clean.
  o = exited(Rung::fence, 3);
  o.interposer = log;
  CHECK(judge_run(o).outcome == RunOutcome::exit_code);
}

TEST_CASE("fence rung: faults the fence may have caused") {
  auto o = exited(Rung::fence, 1, kIllegalAddress);
  o.interposer = fenced_log();
  o.interposer->summary.tma_encodes = 2;
  o.interposer->summary.tma_near_guard = 1;
  o.xid.push_back(xid31(0x7f0000200000));
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.fence_suspicion);
  CHECK(j.fence_suspicion->find("TMA") != std::string::npos);

  o = exited(Rung::fence, 1, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.\n");
  o.interposer = fenced_log();
  j = judge_run(o);
  REQUIRE(j.fence_suspicion);
  CHECK(j.fence_suspicion->find("out of memory under the fence") != std::string::npos);
  // PyTorch's CUDA IPC refused on fenced memory (seen on an H100 with torch.multiprocessing):
  // an invalid argument with no fault address is possibly the fence's.
  o = exited(Rung::fence, 1, "torch.AcceleratorError: CUDA error: invalid argument\n");
  o.interposer = fenced_log();
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.fence_suspicion);
  CHECK(j.fence_suspicion->find("handed to another process (cudaIpcGetMemHandle") != std::string::npos);
  // An illegal address with a fault in a guard is no such suspicion's.
  o = exited(Rung::fence, 1, kIllegalAddress);
  o.interposer = fenced_log();
  o.xid.push_back(xid31(0x7f0000200000));
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  CHECK_FALSE(j.fence_suspicion);
}

TEST_CASE("sanitizer rung: memcheck's report is evidence, its text adds distances") {
  cudadiag::sanitizer::MemcheckReport r;
  r.findings.push_back(memcheck_access("Invalid __global__ write of size 4 bytes", "oob_write"));
  auto o = exited(Rung::sanitizer, 0, "",
                  "========= Invalid __global__ write of size 4 bytes\n"
                  "=========     and is 1 bytes after the nearest allocation at 0x7f5190800000 of size 4,000 bytes\n");
  o.sanitizer = r;
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.error);
  // The text scan sees the record first; memcheck's parsed report keeps the distance.
  CHECK(j.error->source == EvidenceSource::output);
  REQUIRE(j.sanitizer);
  REQUIRE(j.sanitizer->findings[0].nearest);
  CHECK(j.sanitizer->findings[0].nearest->distance_bytes == 1);

  // Only the XML: the report alone names it.
  o = exited(Rung::sanitizer, 0);
  o.sanitizer = r;
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  CHECK(j.error->source == EvidenceSource::sanitizer);
  CHECK(j.error->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  CHECK(j.error->kernel == "oob_write");

  // A clean report.
  o = exited(Rung::sanitizer, 0);
  o.sanitizer = cudadiag::sanitizer::MemcheckReport{};
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::clean);
  CHECK(j.reason.find("memcheck: 0 finding(s)") != std::string::npos);
}

TEST_CASE("sanitizer rung: a program that made no CUDA call is clean, not compute-sanitizer's exit 255") {
  // compute-sanitizer 2025.3 around /bin/true on an H100: its own error line, exit 255, no XML.
  const std::string out = "========= COMPUTE-SANITIZER\n"
                          "========= Error: Target application terminated before first instrumented API call\n";
  auto j = judge_run(exited(Rung::sanitizer, 255, "", out));
  CHECK(j.outcome == RunOutcome::clean);
  CHECK_THAT(j.reason, Catch::StartsWith("made no CUDA call") && Catch::EndsWith("memcheck had nothing to check"));
  // The same line on another rung, or with another exit code, is not taken for it.
  CHECK(judge_run(exited(Rung::native, 255, "", out)).outcome == RunOutcome::exit_code);
  CHECK(judge_run(exited(Rung::sanitizer, 3, "", out)).outcome == RunOutcome::exit_code);
  CHECK(judge_run(exited(Rung::sanitizer, 255, "", "========= COMPUTE-SANITIZER\n")).outcome ==
        RunOutcome::exit_code);
}

TEST_CASE("fence rung: a process that escaped the fence makes an exit 0 not clean, and names it") {
  auto o = exited(Rung::fence, 0);
  o.interposer = fenced_log();
  o.interposer->process_events.push_back({4243, "LD_PRELOAD restored", "/usr/bin/env", false});
  o.interposer->process_events.push_back(
      {4244, "escaped: statically linked (nothing can be preloaded)", "/opt/app/static_worker", true});
  o.interposer->escapes = 1;
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::fence_not_effective);
  REQUIRE(j.fence_escapes.size() == 1);
  CHECK(j.fence_escapes[0] == "process 4244 (/opt/app/static_worker): escaped: statically linked (nothing can be "
                              "preloaded)");
  CHECK(j.reason.find("may have used CUDA outside the fence: process 4244") != std::string::npos);
  REQUIRE(j.fence_notes.size() == 1);
  CHECK(j.fence_notes[0] == "process 4243 (/usr/bin/env): LD_PRELOAD restored");

  // CUDA under RTLD_DEEPBIND in a program that otherwise looked CUDA-free: not "nothing to fence".
  o = exited(Rung::fence, 0);
  InterposerLog log;
  log.summary.loaded = true;
  log.process_events.push_back(
      {4242, "CUDA loaded with RTLD_DEEPBIND: calls from it bypass the fence", "libuser.so", true});
  log.escapes = 1;
  o.interposer = log;
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::fence_not_effective);
  REQUIRE(j.fence);
  CHECK_FALSE(j.fence->cuda_unused);
  CHECK(j.reason.find("RTLD_DEEPBIND") != std::string::npos);
}

TEST_CASE("fence rung: a SIGBUS while the ring was cut short or unreserved is the tool's, not the program's") {
  auto o = killed(Rung::fence, 7, "SIGBUS");
  o.interposer = fenced_log();
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::crashed);
  CHECK_FALSE(j.fence_suspicion);  // a reserved, whole ring: the signal is the program's

  o.interposer->ring.cut_short = true;
  j = judge_run(o);
  REQUIRE(j.fence_suspicion);
  CHECK(j.fence_suspicion->find("may be the tool's own") != std::string::npos);

  o.interposer->ring = RingHealth{};
  o.interposer->ring.unreserved = true;
  j = judge_run(o);
  REQUIRE(j.fence_suspicion);
  CHECK(j.fence_suspicion->find("had no reserved blocks") != std::string::npos);

  // A ring without room is said, and the run is judged on what it did.
  o = exited(Rung::fence, 0);
  o.interposer = fenced_log();
  o.interposer->ring.no_room = "the ring could not be written: no room in /tmp/x; allocations and launches were not "
                               "recorded";
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::clean);
  REQUIRE(j.fence_notes.size() == 1);
  CHECK(j.fence_notes[0].find("no room in /tmp/x") != std::string::npos);
}

namespace {

cudadiag::sanitizer::Finding api_record(const std::string& call, int code, const std::string& name) {
  cudadiag::sanitizer::Finding f;
  f.record_kind = "Api";
  f.message = "CUDA API error " + name + " on " + call;
  f.api = cudadiag::sanitizer::ApiError{call, code, name, ""};
  return f;
}

}  // namespace

TEST_CASE("sanitizer rung: API errors a program handled never hide a memory finding, nor fail the run") {
  // NCCL probing its own kernels: errors it handles, before the faulting kernel's access.
  cudadiag::sanitizer::MemcheckReport r;
  for (int i = 0; i < 3; ++i)
    r.findings.push_back(api_record("cudaFuncGetAttributes", 209, "cudaErrorNoKernelImageForDevice"));
  r.api_errors = 100;
  r.findings.push_back(memcheck_access("Invalid __global__ write of size 4 bytes", "triton_store_kernel"));
  auto o = exited(Rung::sanitizer, 1,
                  "========= Program hit cudaErrorNoKernelImageForDevice (error 209) due to \"no kernel image is "
                  "available for execution on the device\" on CUDA API call to cudaFuncGetAttributes.\n"
                  "========= Invalid __global__ write of size 4 bytes\n"
                  "=========     at triton_store_kernel+0x70\n");
  o.sanitizer = r;
  auto j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.error);
  CHECK(j.error->name == "Invalid __global__ write of size 4 bytes");
  CHECK(j.error->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);

  // The XML alone: its access record, not the first API record.
  o = exited(Rung::sanitizer, 1);
  o.sanitizer = r;
  j = judge_run(o);
  REQUIRE(j.error);
  CHECK(j.error->source == EvidenceSource::sanitizer);
  CHECK(j.error->kernel == "triton_store_kernel");
  CHECK(j.error->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);

  // Only API errors, and the program went on and exited 0: it handled them.
  r.findings.pop_back();
  o = exited(Rung::sanitizer, 0,
             "========= Program hit cudaErrorNoKernelImageForDevice (error 209) due to \"no kernel image is "
             "available for execution on the device\" on CUDA API call to cudaFuncGetAttributes.\n");
  o.sanitizer = r;
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::clean);
  CHECK_FALSE(j.error);

  // ... but a program that failed after one did not handle it: it is the run's error.
  o = exited(Rung::sanitizer, 1);
  o.sanitizer = r;
  j = judge_run(o);
  CHECK(j.outcome == RunOutcome::cuda_error);
  REQUIRE(j.error);
  CHECK(j.error->api_call == "cudaFuncGetAttributes");
}

#pragma once
// One run of the user's program, judged. What is known of it (how it ended, what it
// printed, the Xid lines of its pid, what the interposer recorded, what memcheck
// reported) becomes one outcome with the evidence behind it:
//   clean                exit 0, no CUDA error anywhere (and, on the fence rung, a fence
//                        that could have caught one, or a program that never used CUDA)
//   cuda_error           a CUDA error in its output, memcheck's report or the kernel log,
//                        however it ended
//   crashed              killed by a signal (or a shell said so), no CUDA error
//   exit_code            non-zero exit, no CUDA error
//   timeout              ran past its deadline, no CUDA error (on a fence rung, with the
//                        launch that never returned: a GPU hang, `hang`)
//   slack_write          no CUDA error, but the fence found a write into the alignment slack
//                        after a buffer (between its end and its guard), however it ended
//   does_not_start       exec failed, exit 126/127, or "CMD: not found"
//   fence_not_effective  exit 0 on the fence rung, but the fence could not see the
//                        program's allocations, or a process of the run used CUDA
//                        outside it: not clean
// A signal that the tool itself may have raised (SIGBUS with a ring file cut short or not
// reserved) is a fence suspicion, never the program's fault alone.
#include <optional>
#include <string>
#include <vector>

#include "host/xid.h"
#include "report/fault_site.h"
#include "run/allocation.h"
#include "run/attribution.h"
#include "run/coverage.h"
#include "run/fence_findings.h"
#include "run/error_text.h"
#include "run/rungs.h"
#include "run/xid_match.h"
#include "runner/runner.h"
#include "sanitizer/memcheck.h"

namespace cudadiag::run {

struct RunObservation {
  Rung rung = Rung::native;
  int repeat_index = 0;
  std::vector<std::string> command;  // the user's command
  std::vector<std::string> argv;     // as run: wrapper (compute-sanitizer) + command
  runner::ChildOutcome child;
  std::vector<host::XidEvent> xid;   // kernel-log lines attributed to the child's pid
  // The processes those lines say faulted, one Xid each, matched once to the rings
  // (xid_match.h); empty: the judge matches them by pid alone.
  std::vector<FaultingProcess> faults;
  std::optional<InterposerLog> interposer;  // fence rung: what the ring reader returned
  std::string interposer_error;             // fence rung without a log: why
  std::optional<sanitizer::MemcheckReport> sanitizer;  // sanitizer rung: the parsed XML
  std::string sanitizer_error;                         // sanitizer rung without a report: why
  // GPU core dumps (coredump/arming.h): whether they were armed for this run, the sites
  // the dumps proved (one per dump), and what the report must say of them.
  bool coredump_armed = false;
  std::vector<report::FaultSite> sites;
  std::vector<std::string> coredump_notes;
  // An unarmed run that failed: how its site run (armed, run_session) ended; empty when
  // there was none.
  std::string site_run_outcome;
};

enum class RunOutcome { clean, cuda_error, crashed, exit_code, timeout, does_not_start, fence_not_effective, slack_write };
const char* to_string(RunOutcome o);

// Where the CUDA error of a run was found: the program's output, memcheck's report, a
// kernel-log Xid line, or a GPU core dump.
// end_wait: the fence interposer's wait for the program's GPU work at its end (the
// program never saw the error).
enum class EvidenceSource : std::uint8_t { output, sanitizer, xid, coredump, end_wait };

// What names the CUDA error of a cuda_error run, and where it was found.
struct CudaErrorEvidence {
  std::optional<int> code;   // cudaError_t value, when known
  std::string name;          // cudaErrorIllegalAddress, "Invalid __global__ write ...", "Xid 31"
  std::string driver_name;   // CUDA_ERROR_... when the text used it
  std::optional<taxonomy::ErrorClass> error_class;
  EvidenceSource source = EvidenceSource::output;
  Framework framework = Framework::unknown;
  std::string line;          // the line, finding or Xid message it came from
  std::string api_call;
  std::string kernel;
};

struct RunJudgement {
  Rung rung = Rung::native;
  int repeat_index = 0;
  RunOutcome outcome = RunOutcome::clean;
  std::string reason;  // one line
  std::optional<CudaErrorEvidence> error;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string signal_name;   // from the runner, or from a shell's report of a grandchild
  ErrorTextScan text;        // everything recognised in its output
  std::optional<host::MmuFault> mmu_fault;  // the Xid 31 of the fault it is judged by (primary_fault)
  // Every faulting process the Xid lines name, with its chosen Xid, process and GPU (no logs).
  std::vector<FaultingProcess> faulting_processes;
  std::vector<int> machine_xids;            // Xids that point at the machine (48, 79, 94, ...)
  std::optional<Attribution> attribution;   // fence rung, when it failed and left a log
  // The other faulting processes' faults, each against its own allocations.
  std::vector<Attribution> other_attributions;
  std::optional<FenceEffect> fence;         // fence rungs
  std::optional<FenceReach> fence_reach;    // fence rungs with a log: what the guards covered
  std::vector<SlackFinding> slack_writes;   // fence rungs: writes into a buffer's alignment slack
  std::optional<HangFinding> hang;          // fence rungs past their deadline: the launch that never returned
  // Set by the session when one of the rung's own settings makes the program fail
  // (breaking_setting.h): the failure is the tool's, not the program's.
  std::string broken_by;
  // Sanitizer rung limited to some kernels (--kernel-name kns=<this>): "" for all of them.
  std::string memcheck_kernels;
  std::optional<std::string> fence_suspicion;  // the fault may be the fence's own
  // Fence rung: processes of the run that may have used CUDA outside the fence (an exec
  // the interposer could not follow, CUDA under RTLD_DEEPBIND), one line each: such a
  // run is never clean.
  std::vector<std::string> fence_escapes;
  // Fence rung: what the report must say besides (a restored LD_PRELOAD, a ring with no room).
  std::vector<std::string> fence_notes;
  std::optional<sanitizer::MemcheckReport> sanitizer;  // with the text output's distances
  // Sanitizer rung: compute-sanitizer saw the program end before its first CUDA call.
  bool no_cuda_call = false;
  // The run's core-dump sites, proven addresses placed among the fence's allocations
  // (site_evidence.h); the first evidence of the run.
  std::vector<report::FaultSite> sites;
  // A dump proves a GPU exception the program's output never named (with skip_abort a
  // program may see cudaSuccess).
  bool error_unseen_by_program = false;
  std::vector<std::string> site_notes;  // the dump and the kernel log disagree; armed but no dump
  bool failed() const;  // cuda_error, crashed, exit_code, timeout or slack_write
};

RunJudgement judge_run(const RunObservation& obs);

// Whether a judged run gets a site run (rungs.h: armed_for_site): a GPU exception, a
// crash, a non-zero exit or a hang, the kinds of failure a GPU core dump can locate.
bool wants_site(const RunJudgement& j);

// The site run's sites become the failing run's: placed among the site run's own
// allocations (addresses differ between processes), said to come from it, and when it
// proved nothing, why.
void take_sites_of_site_run(RunJudgement& j, RunObservation& obs, const RunObservation& site_obs,
                            const RunJudgement& site_j);

RunStatus status_of(const RunJudgement& j);

}  // namespace cudadiag::run

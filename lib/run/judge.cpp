#include "run/judge.h"

#include <csignal>

#include <fmt/format.h>

#include "run/ipc_records.h"
#include "run/site_evidence.h"
#include "taxonomy/taxonomy.h"
#include "util/utf8.h"

namespace cudadiag::run {
namespace {

// Signal numbers of the names shells print (Linux x86-64 and aarch64 agree on these).
std::optional<int> signal_number(const std::string& name) {
  if (name == "SIGSEGV") return 11;
  if (name == "SIGABRT") return 6;
  if (name == "SIGBUS") return 7;
  if (name == "SIGFPE") return 8;
  if (name == "SIGILL") return 4;
  if (name == "SIGKILL") return 9;
  return std::nullopt;
}

CudaErrorEvidence from_finding(const ErrorFinding& f) {
  CudaErrorEvidence e;
  e.code = f.code;
  e.name = f.name;
  e.driver_name = f.driver_name;
  e.error_class = f.error_class;
  e.source = EvidenceSource::output;
  e.framework = f.framework;
  e.line = f.line;
  e.api_call = f.api_call;
  e.kernel = f.kernel;
  return e;
}

// The first memcheck record that says something went wrong: a memory access or GPU
// exception first; a record of an API call that returned an error only when the program
// failed (`api_counts`): one that went on had handled it (NCCL probing its own kernels).
std::optional<CudaErrorEvidence> from_memcheck(const sanitizer::MemcheckReport& r, bool api_counts) {
  const sanitizer::Finding* first = nullptr;
  for (const auto& f : r.findings)
    if (!f.is_warning() && !f.api) {
      first = &f;
      break;
    }
  if (!first && api_counts)
    for (const auto& f : r.findings)
      if (!f.is_warning()) {
        first = &f;
        break;
      }
  if (!first) return std::nullopt;
  const auto& f = *first;
  CudaErrorEvidence e;
  e.source = EvidenceSource::sanitizer;
  e.framework = Framework::compute_sanitizer;
  e.kernel = utf8_prefix(f.kernel, 256);
  if (f.api) {
    const auto* t = taxonomy::find_by_name(f.api->error_name);
    if (!t && f.api->code) t = taxonomy::find_runtime(*f.api->code);
    if (t) {
      e.code = t->code;
      e.name = std::string(t->name);
      e.error_class = t->error_class;
    } else {
      e.name = utf8_prefix(f.api->error_name, 80);
      e.error_class = taxonomy::ErrorClass::unknown;
    }
    e.api_call = utf8_prefix(f.api->call, 80);
  } else {
    e.name = utf8_prefix(f.message.empty() ? f.record_kind : f.message, 128);
    e.error_class = f.message.find("isaligned") != std::string::npos ? taxonomy::ErrorClass::misaligned
                                                                      : taxonomy::ErrorClass::memory_fault;
  }
  e.line = utf8_prefix(f.message, kMaxLineExcerpt);
  return e;
}

// Xid 13 (graphics exception), 31 (MMU fault) and 43 (channel stopped) of the pid: the
// GPU saw the program's kernel fault, whatever the program printed.
std::optional<CudaErrorEvidence> from_xid(const std::vector<host::XidEvent>& events) {
  const host::XidEvent* best = nullptr;
  for (const auto& x : events) {
    if (x.xid != 13 && x.xid != 31 && x.xid != 43) continue;
    if (!best || (x.xid == 31 && best->xid != 31)) best = &x;
  }
  if (!best) return std::nullopt;
  CudaErrorEvidence e;
  e.source = EvidenceSource::xid;
  e.name = "Xid " + std::to_string(best->xid);
  e.error_class = best->xid == 31 ? taxonomy::ErrorClass::memory_fault : taxonomy::ErrorClass::unknown;
  e.line = utf8_prefix(best->message, kMaxLineExcerpt);
  return e;
}

// A GPU exception the fence interposer's wait at the program's end returned: the program
// ended without waiting for the work that faulted (the fence rungs run without launch
// blocking). Other failures of that wait are not the program's GPU fault.
std::optional<CudaErrorEvidence> from_end_wait(const std::optional<InterposerLog>& log) {
  if (!log || log->summary.end_wait_result == 0) return std::nullopt;
  const auto* entry = taxonomy::find_driver(log->summary.end_wait_result);
  if (!entry || !taxonomy::is_gpu_exception(entry->error_class)) return std::nullopt;
  CudaErrorEvidence e;
  e.source = EvidenceSource::end_wait;
  e.code = entry->code;
  e.name = std::string(entry->name);
  e.driver_name = std::string(entry->driver_name);
  e.error_class = entry->error_class;
  e.line = fmt::format("{} ({}) from cuCtxSynchronize, the fence's wait for the program's GPU work at its end",
                       entry->driver_name, log->summary.end_wait_result);
  return e;
}

// The exception a GPU core dump recorded: proof of a fault by itself.
CudaErrorEvidence from_site(const report::FaultSite& s) {
  CudaErrorEvidence e;
  e.source = EvidenceSource::coredump;
  e.name = s.exception;
  e.error_class = evidence::site_error_class(s);
  if (const auto* t = evidence::site_runtime_error(s)) {
    e.code = t->code;
    e.name = std::string(t->name) + " (" + s.exception + ")";
  }
  e.line = report::site_line(s);
  e.kernel = s.kernel;
  return e;
}

// The sites, and what the dumps add to the judgement: a dump that records an exception
// is a CUDA error whatever the program printed.
void judge_sites(const RunObservation& obs, RunJudgement& j) {
  j.sites = obs.sites;
  j.site_notes = obs.coredump_notes;
  const auto* site = exception_site(j.sites);
  if (!site) return;
  j.error_unseen_by_program = !j.text.first_cuda();
  if (!j.error || j.error->source == EvidenceSource::xid) j.error = from_site(*site);
}

std::string where(const ErrorFinding& f) {
  return fmt::format("{} line {}", to_string(f.stream), f.line_number);
}

std::string ending_text(const RunJudgement& j, const runner::ChildOutcome& c) {
  if (c.ending == runner::Ending::timeout) return "then ran past its deadline";
  if (c.ending == runner::Ending::signal) return "killed by " + j.signal_name;
  if (j.exit_code && *j.exit_code != 0) return fmt::format("exited with {}", *j.exit_code);
  return "exited 0";
}

std::string process_line(const ProcessEventRecord& e) {
  return fmt::format("process {} ({}): {}", e.pid, e.program.empty() ? "?" : e.program, e.what);
}

// Processes of the run the fence did not cover, and what else the report must say.
void judge_processes(const InterposerLog& log, RunJudgement& j) {
  for (const auto& e : log.process_events) (e.escaped ? j.fence_escapes : j.fence_notes).push_back(process_line(e));
  if (log.escapes > 0 && j.fence_escapes.empty())
    j.fence_escapes.push_back(fmt::format("{} process(es) of the run escaped the fence (not kept in the ring)", log.escapes));
  else if (log.escapes > j.fence_escapes.size())
    j.fence_escapes.push_back(fmt::format("and {} more", log.escapes - j.fence_escapes.size()));
  if (!log.ring.no_room.empty()) j.fence_notes.push_back(log.ring.no_room);
  for (const auto& f : log.ipc_failures) j.fence_notes.push_back(ipc_failure_text(f));
  if (log.ipc_failures_lost > 0)
    j.fence_notes.push_back(fmt::format("CUDA IPC: {} more hand-over(s) of fenced memory failed (not kept in the ring)",
                                        log.ipc_failures_lost));
  if (j.fence_escapes.empty()) return;
  j.fence->effective = false;
  j.fence->cuda_unused = false;
  j.fence->reason = "a process of the run may have used CUDA outside the fence: " + j.fence_escapes.front();
}

void judge_fence(const RunObservation& obs, RunJudgement& j) {
  if (obs.interposer) {
    j.fence = fence_effective(*obs.interposer);
    judge_processes(*obs.interposer, j);
  } else {
    FenceEffect e;
    e.reason = "the interposer left no record" + (obs.interposer_error.empty() ? std::string() : ": " + obs.interposer_error);
    j.fence = e;
    if (obs.interposer_error.find("no room") != std::string::npos) j.fence_notes.push_back(obs.interposer_error);
  }
  if (const auto* p = j.text.first_of(FindingKind::preload_failed);
      p && p->line.find(kInterposerFile) != std::string::npos) {
    j.fence->effective = false;
    j.fence->cuda_unused = false;
    j.fence->reason = "ld.so could not preload the interposer: " + p->line;
  }
  if (!obs.interposer) return;
  j.fence_reach = fence_reach_of(*obs.interposer, j.fence->effective);
  Symbolizer symbols(obs.interposer->modules);
  j.slack_writes = slack_findings(*obs.interposer, &symbols);
  if (obs.child.ending == runner::Ending::timeout) j.hang = hang_finding(*obs.interposer);
}

// SIGBUS is what a write into a shared mapping past its file's end, or into blocks the
// file system has no room for, raises: with a ring cut short or not reserved, the signal
// may be the interposer's own.
std::optional<std::string> ring_suspicion(const RingHealth& ring, const RunJudgement& j) {
  if (j.outcome != RunOutcome::crashed || j.signal != SIGBUS) return std::nullopt;
  if (!ring.cut_short && !ring.unreserved) return std::nullopt;
  return std::string("killed by SIGBUS while the interposer's ring file ") +
         (ring.cut_short ? "was shorter than its header says" : "had no reserved blocks") +
         ": the signal may be the tool's own write into its ring, not the program's";
}

// A fault placed among `log`'s allocations: the GPU the Xid named when the ring knows no
// other, and where a certain allocation was made.
Attribution attribute_in(const InterposerLog& log, std::optional<std::uint64_t> address, AddressPrecision precision,
                         const FaultingProcess* fault) {
  Attribution a = attribute_fault(log, address, precision);
  if (fault && fault->gpu && !a.gpu) {
    a.gpu = fault->gpu;
    a.device = fault->gpu->ordinal;
    refresh_summary(a);
  }
  if (a.allocation && a.certain) {
    Symbolizer symbols(log.modules);
    a.allocated_at = allocation_origin(log, *a.allocation, symbols);
    if (!a.allocated_at.empty())
      a.summary += fmt::format("; #{} was allocated at {}", a.allocation->seq, report::origin_text(a.allocated_at));
  }
  return a;
}

void attribute(const RunObservation& obs, RunJudgement& j, const std::vector<FaultingProcess>& faults) {
  if (!obs.interposer) return;
  const FaultingProcess* primary = primary_fault(faults);
  // The dump's proven byte beats the Xid's page.
  std::optional<std::uint64_t> address = proven_address(j.sites);
  const AddressPrecision precision = address ? AddressPrecision::exact : AddressPrecision::page;
  if (!address && j.mmu_fault) address = j.mmu_fault->address;
  j.attribution = attribute_in(*obs.interposer, address, precision, primary);
  // Every other faulting process's address against its own allocations only.
  for (const auto& f : faults)
    if (&f != primary && f.log && f.xid.mmu_fault)
      j.other_attributions.push_back(attribute_in(*f.log, f.xid.mmu_fault->address, AddressPrecision::page, &f));
  j.fence_suspicion = ring_suspicion(obs.interposer->ring, j);
  if (!j.fence_suspicion) j.fence_suspicion = fence_suspicion(obs.interposer->summary, *j.attribution);
  if (!j.fence_suspicion && j.error && j.error->error_class == taxonomy::ErrorClass::out_of_memory) {
    j.fence_suspicion =
        "out of memory under the fence: each fenced allocation maps whole granules (2 MiB on current GPUs), so a "
        "program with many small allocations needs far more memory; this error can be the fence's";
  }
  // No fault address, an argument refused: fenced memory is no cudaMalloc memory (16-byte
  // alignment; shared over CUDA IPC with a handle of the interposer's own, which a device
  // without POSIX file descriptor handles cannot give), and a program that checks its
  // alignment or shares it with another process may be refused by CUDA itself.
  if (!j.fence_suspicion && j.error && j.error->error_class == taxonomy::ErrorClass::invalid_value &&
      !(j.attribution && j.attribution->allocation)) {
    j.fence_suspicion =
        "an argument refused under the fence with no fault address: fenced memory is 16-byte aligned where "
        "cudaMalloc gives 256, and is handed to another process (cudaIpcGetMemHandle, torch.multiprocessing) only "
        "where the device exports memory as a file descriptor; this error can be the fence's";
  }
}

}  // namespace

const char* to_string(RunOutcome o) {
  switch (o) {
    case RunOutcome::clean: return "clean";
    case RunOutcome::cuda_error: return "cuda_error";
    case RunOutcome::crashed: return "crashed";
    case RunOutcome::exit_code: return "exit_code";
    case RunOutcome::timeout: return "timeout";
    case RunOutcome::does_not_start: return "does_not_start";
    case RunOutcome::fence_not_effective: return "fence_not_effective";
    case RunOutcome::slack_write: return "slack_write";
  }
  return "clean";
}

bool RunJudgement::failed() const {
  return outcome == RunOutcome::cuda_error || outcome == RunOutcome::crashed || outcome == RunOutcome::exit_code ||
         outcome == RunOutcome::timeout || outcome == RunOutcome::slack_write;
}

RunStatus status_of(const RunJudgement& j) {
  return RunStatus{j.rung, j.outcome != RunOutcome::does_not_start, j.failed()};
}

bool wants_site(const RunJudgement& j) {
  // A program that exits non-zero may have caught the error and printed it its own way.
  if (j.outcome == RunOutcome::timeout || j.outcome == RunOutcome::crashed || j.outcome == RunOutcome::exit_code)
    return true;
  if (j.outcome != RunOutcome::cuda_error || !j.error) return false;
  return j.error->error_class && taxonomy::is_gpu_exception(*j.error->error_class);
}

void take_sites_of_site_run(RunJudgement& j, RunObservation& obs, const RunObservation& site_obs,
                            const RunJudgement& site_j) {
  obs.site_run_outcome = to_string(site_j.outcome);
  obs.coredump_notes = site_obs.coredump_notes;
  obs.sites = site_obs.sites;
  j.sites = site_j.sites;
  const bool found = exception_site(j.sites) != nullptr || (j.outcome == RunOutcome::timeout && waiting_site(j.sites));
  j.site_notes.push_back(fmt::format("the site comes from a second run of this rung with GPU core dumps armed (it "
                                     "ended {}{})",
                                     to_string(site_j.outcome), found ? "" : ", with no dump that locates the failure"));
  j.site_notes.insert(j.site_notes.end(), site_j.site_notes.begin(), site_j.site_notes.end());
  // A run that exited non-zero or died without naming a CUDA error: the same program's
  // dump proves the GPU exception (as in judge_sites, whatever the program printed).
  if (j.outcome == RunOutcome::exit_code || j.outcome == RunOutcome::crashed)
    if (const auto* s = exception_site(j.sites)) {
      j.reason = fmt::format("{}, proven by the GPU core dump of its site run; this run {}", s->exception, j.reason);
      j.outcome = RunOutcome::cuda_error;
      j.error = from_site(*s);
    }
  if (j.outcome == RunOutcome::timeout)
    if (const auto* w = waiting_site(j.sites)) j.reason += "; at the deadline of the armed run: " + report::site_line(*w);
}

RunJudgement judge_run(const RunObservation& obs) {
  RunJudgement j;
  j.rung = obs.rung;
  j.repeat_index = obs.repeat_index;
  const auto& c = obs.child;
  const std::string err_text = c.err.text();
  const std::string out_text = c.out.text();
  j.text = scan_error_text(err_text, out_text);
  j.signal = c.signal;
  j.signal_name = c.signal_name;
  if (c.ending == runner::Ending::result || c.ending == runner::Ending::no_result ||
      c.ending == runner::Ending::exit_code)
    j.exit_code = c.exit_code.value_or(0);

  // One Xid per faulting process: the run is judged by the first that names an address.
  const std::vector<FaultingProcess> faults =
      obs.faults.empty() ? match_faulting_processes(obs.xid, nullptr) : obs.faults;
  for (const auto& f : faults) {
    j.faulting_processes.push_back(f);
    j.faulting_processes.back().log.reset();
  }
  if (const auto* primary = primary_fault(faults); primary && primary->xid.mmu_fault) j.mmu_fault = primary->xid.mmu_fault;
  for (const auto& x : obs.xid) {
    // An old driver's line names no pid: its address still counts when no process's does.
    if (x.xid == 31 && x.mmu_fault && !x.pid && !j.mmu_fault) j.mmu_fault = x.mmu_fault;
    if (host::xid_meaning(x.xid).points_to == report::XidPointsTo::hardware) j.machine_xids.push_back(x.xid);
  }
  if (obs.rung == Rung::sanitizer)
    for (std::size_t i = 0; i + 1 < obs.argv.size(); ++i)
      if (obs.argv[i] == "--kernel-name" && obs.argv[i + 1].rfind("kns=", 0) == 0) {
        j.memcheck_kernels = obs.argv[i + 1].substr(4);
        break;
      }
  if (obs.sanitizer) {
    j.sanitizer = obs.sanitizer;
    sanitizer::attach_text_allocations(*j.sanitizer, err_text + "\n" + out_text);
  }
  if (is_fence(obs.rung)) judge_fence(obs, j);

  // The command never ran.
  if (c.ending == runner::Ending::spawn_failed) {
    j.outcome = RunOutcome::does_not_start;
    j.reason = "the command did not start: " + (c.spawn_error.empty() ? std::string("spawn failed") : c.spawn_error);
    return j;
  }

  // memcheck's text record of an API call that returned an error ("Program hit ..."):
  // after its access records, and only when the program failed (see from_memcheck).
  const bool program_failed = c.ending == runner::Ending::signal || c.ending == runner::Ending::timeout ||
                              (j.exit_code && *j.exit_code != 0);
  const ErrorFinding* text_error = j.text.first_cuda();
  if (text_error && text_error->kind == FindingKind::cuda_error &&
      text_error->framework == Framework::compute_sanitizer) {
    if (const auto* access = j.text.first_of(FindingKind::sanitizer)) text_error = access;
    else if (!program_failed) text_error = nullptr;
  }
  if (text_error) j.error = from_finding(*text_error);
  else if (j.sanitizer) j.error = from_memcheck(*j.sanitizer, program_failed);
  if (!j.error) j.error = from_xid(obs.xid);
  if (!j.error) j.error = from_end_wait(obs.interposer);
  judge_sites(obs, j);

  const auto* not_started = j.text.first_of(FindingKind::not_started);
  const bool exit_126_127 = j.exit_code && (*j.exit_code == 126 || *j.exit_code == 127);
  if (!j.error && (exit_126_127 || (not_started && j.exit_code && *j.exit_code != 0))) {
    j.outcome = RunOutcome::does_not_start;
    j.reason = fmt::format("the command did not start (exit {}){}", *j.exit_code,
                           not_started ? ": " + not_started->line : std::string());
    return j;
  }

  // compute-sanitizer ends a program that made no CUDA call with an error of its own (exit
  // 255, no XML): memcheck had nothing to check. Seen on an H100 with `/bin/true`. The
  // program's own exit status is not known from this run (the native rung has it).
  const bool no_cuda_under_memcheck = obs.rung == Rung::sanitizer && !j.error && j.text.sanitizer_saw_no_cuda_call &&
                                      j.exit_code && *j.exit_code == 255;
  if (j.error) {
    j.outcome = RunOutcome::cuda_error;
    const auto* f = j.text.first_cuda();
    j.reason = fmt::format("{} ({}) in {}{}, {}", j.error->name,
                           taxonomy::to_string(j.error->error_class.value_or(taxonomy::ErrorClass::unknown)),
                           j.error->source == EvidenceSource::output && f ? "its output, " + where(*f)
                           : j.error->source == EvidenceSource::sanitizer ? std::string("memcheck's report")
                           : j.error->source == EvidenceSource::coredump  ? std::string("the GPU core dump")
                           : j.error->source == EvidenceSource::end_wait
                               ? std::string("the fence's wait at the program's end (the program ended without "
                                             "waiting for the work that faulted)")
                               : std::string("the kernel log"),
                           j.error->framework != Framework::unknown && j.error->source == EvidenceSource::output
                               ? fmt::format(" ({})", to_string(j.error->framework))
                               : std::string(),
                           ending_text(j, c));
  } else if (c.ending == runner::Ending::signal) {
    j.outcome = RunOutcome::crashed;
    j.reason = "killed by " + c.signal_name + " with no CUDA error in its output or the kernel log";
  } else if (c.ending == runner::Ending::timeout) {
    j.outcome = RunOutcome::timeout;
    j.reason = c.killed_after_grace ? "ran past its deadline and ignored SIGTERM (killed)" : "ran past its deadline";
  } else if (no_cuda_under_memcheck) {
    j.outcome = RunOutcome::clean;
    j.no_cuda_call = true;
    j.reason = "made no CUDA call (compute-sanitizer: \"Target application terminated before first instrumented API "
               "call\"): memcheck had nothing to check";
  } else if (j.exit_code && *j.exit_code != 0) {
    const auto* sig = j.text.first_of(FindingKind::signal);
    if (sig && *j.exit_code > 128) {
      // A shell (or launcher) between us and the program reported its death.
      j.outcome = RunOutcome::crashed;
      j.signal_name = sig->signal_name;
      j.signal = signal_number(sig->signal_name);
      j.reason = fmt::format("a process it ran died of {} ({}; exit {})", sig->signal_name, where(*sig), *j.exit_code);
    } else {
      j.outcome = RunOutcome::exit_code;
      j.reason = fmt::format("exited with {} with no CUDA error in its output or the kernel log", *j.exit_code);
    }
  } else if (j.fence && !j.fence->effective && !j.fence->cuda_unused) {
    j.outcome = RunOutcome::fence_not_effective;
    j.reason = "exited 0, but the fence could not have caught an overrun: " + j.fence->reason;
  } else {
    j.outcome = RunOutcome::clean;
    j.reason = j.fence && j.fence->cuda_unused ? "exited 0 and never used CUDA: nothing to fence"
                                               : "exited 0 with no CUDA error in its output or the kernel log";
    if (j.fence && !j.fence->cuda_unused) j.reason += "; fence: " + j.fence->reason;
    if (j.sanitizer) j.reason += fmt::format("; memcheck: {} finding(s)", j.sanitizer->findings.size());
  }

  if (j.error_unseen_by_program && j.outcome == RunOutcome::cuda_error)
    j.reason += "; the program did not see the error (its output names none): the driver's core dump proves it";
  if (j.outcome == RunOutcome::timeout)
    if (const auto* w = waiting_site(j.sites)) j.reason += "; at the deadline: " + report::site_line(*w);
  {
    const auto lines = place_sites(j.sites, obs.interposer ? &*obs.interposer : nullptr, j.mmu_fault);
    j.site_notes.insert(j.site_notes.end(), lines.begin(), lines.end());
  }
  if (obs.coredump_armed && j.sites.empty() && j.outcome == RunOutcome::cuda_error && j.error &&
      (j.error->error_class == taxonomy::ErrorClass::memory_fault ||
       j.error->error_class == taxonomy::ErrorClass::misaligned ||
       j.error->error_class == taxonomy::ErrorClass::device_assert))
    j.site_notes.push_back(
        "core dumps were armed but the driver wrote none: this driver may not write GPU core dumps (or the error "
        "was not a GPU exception); the rest of the evidence stands");
  // A write into the slack is the program's, whatever else happened (a CUDA error wins).
  if (!j.slack_writes.empty() && (j.outcome == RunOutcome::clean || j.outcome == RunOutcome::exit_code ||
                                  j.outcome == RunOutcome::fence_not_effective || j.outcome == RunOutcome::timeout)) {
    j.outcome = RunOutcome::slack_write;
    j.reason = "the fence found " + j.slack_writes.front().line +
               (j.slack_writes.size() > 1 ? fmt::format(" (and {} more)", j.slack_writes.size() - 1) : std::string());
  }
  if (j.hang && j.outcome == RunOutcome::timeout) j.reason += "; " + j.hang->line;

  if (j.failed() && is_fence(obs.rung)) {
    attribute(obs, j, faults);
    if (j.attribution && j.attribution->allocation && j.attribution->certain) j.reason += "; " + j.attribution->summary;
    for (const auto& a : j.other_attributions)
      if (a.allocation && a.certain) j.reason += "; and " + a.summary;
    if (j.fence_suspicion) j.reason += "; " + *j.fence_suspicion;
  }
  return j;
}

}  // namespace cudadiag::run

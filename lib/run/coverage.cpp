#include "run/coverage.h"

#include <algorithm>

#include <fmt/format.h>

#include "run/ipc_records.h"
#include "run/judge.h"

namespace cudadiag::run {
namespace {

// Reasons an allocation was left to the driver that do not hide device memory the
// program could overrun: host memory, a zero-byte request, the fence switched off.
bool harmless_unfenced(const std::string& reason) {
  return reason == ring::unfenced_text(ring::Unfenced::host_memory) ||
         reason == ring::unfenced_text(ring::Unfenced::zero_bytes);
}

std::string mib(std::uint64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// "as far past it as the buffer is large (at most 1 GiB)", "one granule (2 MiB) past it"
std::string guard_reach_text(const Coverage& c, const char* where) {
  const std::uint64_t reach = c.guard_reach_bytes.value_or(0);
  if (!c.guard_scaled)
    return fmt::format("one granule{} {} it (CUDADIAG_GUARD=granule)",
                       c.granularity ? " (" + size_text(c.granularity) + ")" : "", where);
  return fmt::format("as far {} it as the buffer is large{}", where,
                     reach ? " (at most " + size_text(reach) + ")" : "");
}

}  // namespace

FenceReach fence_reach_of(const InterposerLog& log, bool effective) {
  FenceReach r;
  r.side = log.summary.side;
  r.effective = effective;
  r.allocations = log.summary.allocations;
  r.fenced = log.summary.fenced;
  r.quarantine_limit_bytes = log.summary.quarantine_limit_bytes;
  r.recycle_limit_bytes = log.summary.recycle_limit_bytes;
  r.slack_watched = log.summary.slack_watched;
  r.program_mappings = log.summary.program_mappings;
  r.ipc_imports = log.summary.ipc_imports;
  r.guard_mode = log.summary.guard_mode;
  r.granularity = log.summary.granularity;
  r.guard_limit_bytes = log.summary.guard_limit_bytes;
  r.guard_total_limit_bytes = log.summary.guard_total_limit_bytes;
  r.guards_cut = log.summary.guards_cut;
  for (const auto& a : log.allocations) {
    if (a.side != FenceSide::none || a.unfenced_reason.empty()) continue;
    if (a.unfenced_reason == ring::unfenced_text(ring::Unfenced::program_mapped)) continue;  // counted in the header
    if (a.unfenced_reason == ring::unfenced_text(ring::Unfenced::ipc_imported)) {
      ++r.unguarded_imports;
      continue;
    }
    ++r.unfenced[a.unfenced_reason];
  }
  return r;
}

std::string directions_text(const Coverage& c) {
  if (c.past_end && c.before_start) return "past the end and before the start";
  if (c.past_end) return "past the end";
  if (c.before_start) return "before the start";
  return "";
}

Coverage ladder_coverage(const std::vector<RunJudgement>& runs) {
  Coverage c;
  std::uint64_t quarantine = 0;
  std::string memcheck_kernels;  // memcheck ran, limited to these kernels
  for (const auto& j : runs) {
    // A run that one of the tool's own settings broke checked nothing.
    if (!j.broken_by.empty()) continue;
    if (j.rung == Rung::sanitizer && j.sanitizer) {
      if (j.memcheck_kernels.empty()) c.memcheck = true;
      else memcheck_kernels = j.memcheck_kernels;
    }
    if (!j.fence_reach) continue;
    const FenceReach& f = *j.fence_reach;
    for (const auto& [reason, n] : f.unfenced)
      if (!harmless_unfenced(reason)) c.unfenced[reason] = std::max(c.unfenced[reason], n);
    c.program_mappings = std::max(c.program_mappings, f.program_mappings);
    c.unguarded_imports = std::max(c.unguarded_imports, f.unguarded_imports);
    // A guard that caught an overrun guarded that end, whatever else made the run's fence
    // not effective (a process that escaped it): the coverage never contradicts an exposure.
    if (const auto& a = j.attribution; a && a->certain && a->allocation && a->allocation->side != FenceSide::none) {
      if (a->relation == Relation::past_end) c.past_end = true;
      if (a->relation == Relation::before_start) c.before_start = true;
    }
    if (!f.effective) continue;
    if (f.side == FenceSide::back) c.past_end = true;
    if (f.side == FenceSide::front) c.before_start = true;
    if (f.side == FenceSide::back && f.slack_watched) c.slack_writes = true;
    c.ipc_imports = std::max(c.ipc_imports, f.ipc_imports);
    // The shortest reach of the runs that guarded: one granule wins over a scaled guard.
    if (f.guard_mode == fence::GuardMode::granule) {
      c.guard_scaled = false;
      c.guard_reach_bytes = f.granularity;
    } else if (c.guard_scaled && f.guard_limit_bytes > 0) {
      c.guard_reach_bytes = c.guard_reach_bytes ? std::min(*c.guard_reach_bytes, f.guard_limit_bytes) : f.guard_limit_bytes;
    }
    if (c.granularity == 0) c.granularity = f.granularity;
    c.guard_total_limit_bytes = std::max(c.guard_total_limit_bytes, f.guard_total_limit_bytes);
    c.guards_cut = std::max(c.guards_cut, f.guards_cut);
    if (f.recycle_limit_bytes > 0) c.recycled = true;
    if (f.quarantine_limit_bytes > 0 && f.recycle_limit_bytes == 0) {
      c.use_after_free = true;
      quarantine = std::max(quarantine, f.quarantine_limit_bytes);
    }
    if (!c.fenced || f.fenced * *c.allocations < *c.fenced * f.allocations) {  // the smallest share
      c.allocations = f.allocations;
      c.fenced = f.fenced;
    }
  }

  const std::string counted =
      c.fenced ? fmt::format(" ({} of {} allocations fenced)", *c.fenced, *c.allocations) : std::string();
  // Guarded only through an attribution (no effective fenced run): how far is not known.
  const bool reach_known = c.guard_reach_bytes.has_value() || !c.guard_scaled;
  if (c.past_end)
    c.seen.push_back("reads and writes past the end of a fenced buffer, from the first byte" +
                     (reach_known ? " to " + guard_reach_text(c, "past") : std::string()) + counted);
  if (c.before_start)
    c.seen.push_back("reads and writes before the start of a fenced buffer, from the first byte" +
                     (reach_known ? " to " + guard_reach_text(c, "before") : std::string()) + counted);
  if (c.slack_writes)
    c.seen.push_back("writes into the alignment slack between a buffer's end and its guard (canaries checked at free "
                     "and at exit)");
  if (c.ipc_imports > 0 && (c.past_end || c.before_start))
    c.seen.push_back(fmt::format("the same in the process that imported a fenced buffer over CUDA IPC ({} import(s), "
                                 "mapped against a guard of their own)",
                                 c.ipc_imports));
  if (c.use_after_free)
    c.seen.push_back("use after free while the freed range stays in quarantine (up to " + mib(quarantine) + ")");
  if (c.memcheck) c.seen.push_back("invalid accesses anywhere in device memory the driver knows, at the byte (memcheck)");
  else if (!memcheck_kernels.empty())
    c.seen.push_back("invalid accesses of the kernels named like " + memcheck_kernels +
                     ", at the byte (memcheck, limited to them)");

  if (!c.memcheck) {
    if (!c.past_end) c.unseen.push_back("overruns past the end (no effective fence rung guarded the ends)");
    if (!c.before_start) c.unseen.push_back("underruns before the start (no effective fence-front rung)");
    c.unseen.push_back(c.slack_writes ? "reads in the alignment slack (a read leaves no trace)"
                                      : "reads and writes in the alignment slack after a buffer whose size is not a "
                                        "multiple of the alignment");
    if ((c.past_end || c.before_start) && reach_known) {
      if (!c.guard_scaled)
        c.unseen.push_back(fmt::format("reads and writes further than one granule{} from a buffer's end (start): they "
                                       "jump the guard into whatever is mapped behind it (CUDADIAG_GUARD=granule; by "
                                       "default the guard is as large as the buffer)",
                                       c.granularity ? " (" + size_text(c.granularity) + ")" : ""));
      else
        c.unseen.push_back(fmt::format("reads and writes further from a buffer's end (start) than the buffer is "
                                       "large{}: they may land in another buffer's mapping",
                                       c.guard_reach_bytes ? ", or than " + size_text(*c.guard_reach_bytes)
                                                           : std::string()));
    }
    if (c.guard_scaled && c.guards_cut > 0)
      c.unseen.push_back(fmt::format(
          "{} buffer(s) got a guard smaller than their size allows, down to one granule{}: the bound on all "
          "guards{} was reached (or the address space refused), so they are watched less far",
          c.guards_cut, c.granularity ? " (" + size_text(c.granularity) + ")" : "",
          c.guard_total_limit_bytes ? " (" + size_text(c.guard_total_limit_bytes) + " of address space)"
                                    : std::string()));
  }
  for (const auto& [reason, n] : c.unfenced)
    c.unseen.push_back(fmt::format("{} allocation(s) left unfenced ({}){}", n, reason,
                                   c.memcheck ? ": memcheck covered them" : ": nothing watched them"));
  if (c.program_mappings > 0)
    c.unseen.push_back(fmt::format("overruns of the {} mapping(s) the program made itself with cuMemMap (NCCL's buffers, "
                                   "PyTorch's expandable segments): recorded, not fenced{}",
                                   c.program_mappings, c.memcheck ? "; memcheck covered them" : ""));
  if (c.unguarded_imports > 0)
    c.unseen.push_back(fmt::format("overruns of the {} buffer(s) imported over CUDA IPC that their exporter had not "
                                   "fenced: recorded, not guarded{}",
                                   c.unguarded_imports, c.memcheck ? "; memcheck covered them" : ""));
  c.unseen.push_back("overruns that stay inside an allocation (into a neighbouring row or element of the same buffer)");
  c.unseen.push_back(
      "overruns inside a framework pool (caching allocator, RMM, XLA's BFC): the guard sits after the slab, not the "
      "piece");
  if (c.use_after_free) c.unseen.push_back("use after free once the range has left the quarantine");
  else if (c.recycled && !c.memcheck)
    c.unseen.push_back("use after free: the fence rung keeps freed buffers mapped for the next allocation of their "
                       "size (the fence-front rung, or --fence-recycle-mb 0, watches it)");
  return c;
}

bool fence_blind_somewhere(const Coverage& c) { return !(c.past_end || c.before_start) || !c.unfenced.empty(); }

std::string kernel_base_name(const std::string& demangled) {
  std::string s = demangled.substr(0, demangled.find('('));
  if (const auto t = s.find('<'); t != std::string::npos) s.erase(t);
  if (const auto sp = s.rfind(' '); sp != std::string::npos) s.erase(0, sp + 1);  // "void k" -> "k"
  return s;
}

MemcheckPlan plan_memcheck(SanitizeMode mode, const std::vector<RunJudgement>& earlier) {
  MemcheckPlan p;
  if (mode == SanitizeMode::never) {
    p.reason = "--sanitize never";
    return p;
  }
  // The kernel a failing fenced run suspects, when it is certain which buffer was hit.
  for (const auto& j : earlier)
    if (is_fence(j.rung) && j.failed() && j.attribution && j.attribution->certain && j.attribution->suspect &&
        j.attribution->suspect_uses_allocation && !j.attribution->suspect->kernel.empty()) {
      p.kernel = kernel_base_name(j.attribution->suspect->kernel);
      break;
    }
  if (mode == SanitizeMode::always) {
    p.run = true;
    p.reason = "--sanitize always";
    return p;
  }
  const bool failed = std::any_of(earlier.begin(), earlier.end(),
                                  [](const RunJudgement& j) { return j.rung != Rung::sanitizer && j.failed() && j.broken_by.empty(); });
  if (failed) {
    p.run = true;
    p.reason = "--sanitize auto: an earlier rung failed";
    return p;
  }
  // A fenced run that saw no CUDA at all: nothing to look for.
  const bool no_cuda = std::any_of(earlier.begin(), earlier.end(),
                                   [](const RunJudgement& j) {
                                     return is_fence(j.rung) && j.broken_by.empty() && j.fence && j.fence->cuda_unused;
                                   });
  const Coverage c = ladder_coverage(earlier);
  if (!no_cuda && fence_blind_somewhere(c)) {
    p.run = true;
    std::string blind;
    for (const auto& [reason, n] : c.unfenced) blind += fmt::format("{}{} ({})", blind.empty() ? "" : ", ", n, reason);
    p.reason = blind.empty() ? "--sanitize auto: no fenced run could have seen an overrun"
                             : "--sanitize auto: the fence could not see some allocations: " + blind;
    return p;
  }
  p.reason = "--sanitize auto: no earlier rung found anything";
  return p;
}

}  // namespace cudadiag::run

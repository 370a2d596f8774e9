#include "run/run_verdict.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "evidence/cuda_start.h"
#include "repeat/series.h"
#include "report/vocabulary.h"
#include "run/hang_stop.h"
#include "run/site_evidence.h"
#include "stats/rate_text.h"

namespace cudadiag::run {
namespace {

std::string triple(const std::optional<std::array<long long, 3>>& t) {
  if (!t) return "?";
  return fmt::format("({},{},{})", (*t)[0], (*t)[1], (*t)[2]);
}

std::string rate(const RungStats& s) {
  return std::string(to_string(s.rung)) + ": " + stats::rate_text(s.failures, s.runs, s.ci);
}

const RungStats* stats_of(const std::vector<RungStats>& all, Rung r) {
  for (const auto& s : all)
    if (s.rung == r) return &s;
  return nullptr;
}

// One memcheck record, from its XML (sanitizer::Finding) or its text (AccessDetails).
std::string memcheck_line(const std::string& what, const std::string& kernel, const std::string& location,
                          const std::optional<std::array<long long, 3>>& thread,
                          const std::optional<std::array<long long, 3>>& block,
                          const std::optional<sanitizer::NearestAllocation>& nearest) {
  std::string s = "memcheck: " + what;
  if (!kernel.empty()) s += " in " + kernel;
  if (!location.empty()) s += " at " + location;
  if (thread || block) s += ", thread " + triple(thread) + " block " + triple(block);
  if (nearest) {
    s += fmt::format(", {} bytes {} the nearest allocation", nearest->distance_bytes, nearest->relation);
    if (nearest->size) s += fmt::format(" ({} bytes)", *nearest->size);
  }
  return s;
}

std::string memcheck_line(const sanitizer::Finding& f) {
  const std::string location = !f.file.empty() && f.line ? fmt::format("{}:{}", f.file, *f.line) : std::string();
  return memcheck_line(f.message.empty() ? f.record_kind : f.message, f.kernel, location, f.thread, f.block, f.nearest);
}

std::string memcheck_line(const ErrorFinding& f) {
  const auto& a = *f.access;
  return memcheck_line(f.name, a.kernel, a.location, a.thread, a.block, a.nearest);
}

std::string assert_line(const ErrorFinding& f) {
  const auto& a = *f.assertion;
  std::string s = "device assert `" + a.expression + "` failed";
  if (!a.file.empty()) s += " at " + a.file + (a.line ? fmt::format(":{}", *a.line) : std::string());
  if (!a.function.empty()) s += " in " + a.function;
  if (a.block || a.thread) s += ", block " + triple(a.block) + " thread " + triple(a.thread);
  return s;
}

// How precise one failing run's evidence is (higher: better), and its line.
std::pair<int, std::string> evidence_of(const RunJudgement& j) {
  const std::string rung = std::string(to_string(j.rung)) + ": ";
  // The GPU's own core dump first: kernel, line, thread and the proven byte, with or
  // without the kernel log.
  // A dump that proves the exception only (the faulting store's warp had moved on: no
  // kernel) ranks below the allocation the kernel log or memcheck names.
  // A store's site from the SM's error PC (its warp had exited) names kernel and line but
  // no byte: the buffer the kernel log's page lies in follows it.
  const auto* site = exception_site(j.sites);
  if (site && (!site->kernel.empty() || !site->function.empty())) {
    std::string line = rung + "GPU core dump: " + report::site_line(*site);
    if (j.error_unseen_by_program) line += " (the program did not see the error)";
    if (site->address_status != report::AddressStatus::proven && j.attribution && j.attribution->allocation &&
        j.attribution->certain)
      line += "; " + j.attribution->summary;
    else if (j.attribution && j.attribution->names_owner && !owner_text(*j.attribution).empty())
      line += "; in " + owner_text(*j.attribution);  // whose dump: the process the run is judged by
    return {7, line};
  }
  if (j.outcome == RunOutcome::slack_write && !j.slack_writes.empty()) return {6, rung + j.slack_writes.front().line};
  if (j.attribution && j.attribution->allocation && j.attribution->certain) {
    std::string access = j.mmu_fault ? std::string("a ") + host::to_string(j.mmu_fault->access) + " fault: " : "";
    return {6, rung + access + j.attribution->summary};
  }
  if (j.sanitizer)
    for (const auto& f : j.sanitizer->findings)
      if (!f.api && !f.is_warning()) return {5, rung + memcheck_line(f)};
  if (const auto* f = j.text.first_of(FindingKind::sanitizer); f && f->access) return {4, rung + memcheck_line(*f)};
  if (j.attribution && j.attribution->allocation) return {3, rung + j.attribution->summary};
  if (const auto* f = j.text.first_of(FindingKind::device_assert); f && f->assertion) return {2, rung + assert_line(*f)};
  // Without an address (no readable kernel log) the fence still knows what ran last.
  const std::string last_kernel =
      j.attribution && j.attribution->suspect && !j.attribution->suspect->kernel.empty()
          ? "; the last kernel launched: " + j.attribution->suspect->kernel
          : std::string();
  if (site)
    return {1, rung + "GPU core dump: " + report::site_line(*site) +
                   " (the dump could not place it: the faulting warp had moved on)" + last_kernel};
  if (j.error) return {1, rung + j.error->name + ": " + j.error->line + last_kernel};
  if (waiting_site(j.sites)) return {1, rung + j.reason};  // a hang: where its warps wait
  return {0, rung + j.reason + last_kernel};
}

bool genuine_fault(const RunJudgement& j) {
  return (j.outcome == RunOutcome::cuda_error || j.outcome == RunOutcome::crashed ||
          j.outcome == RunOutcome::slack_write) &&
         !j.fence_suspicion;
}

// A rung that can see a silent overrun: the fence rungs and memcheck.
bool can_see_overruns(Rung r) { return is_fence(r) || r == Rung::sanitizer; }

// Why a run without failures proves nothing: what could have seen a silent overrun did
// not run or could not see. A run one of the tool's own settings broke saw nothing.
std::string blind_spots(const std::vector<RunJudgement>& runs, const std::vector<SkippedRung>& skipped) {
  std::vector<std::string> why;
  bool fence_ran = false, sanitizer_ran = false;
  std::set<Rung> broken;
  for (const auto& j : runs) {
    if (!j.broken_by.empty() && can_see_overruns(j.rung)) {
      if (broken.insert(j.rung).second)
        why.push_back(fmt::format("the {} rung checked nothing: {} (cudadiag's own setting, not the program)",
                                  to_string(j.rung), j.broken_by));
      continue;
    }
    if (is_fence(j.rung)) {
      if (!fence_ran && j.fence && !j.fence->effective) why.push_back("the fence was not effective: " + j.fence->reason);
      fence_ran = true;
    }
    if (j.rung == Rung::sanitizer) {
      if (!sanitizer_ran && !j.sanitizer) why.push_back("memcheck left no report");
      sanitizer_ran = true;
    }
  }
  for (const auto& s : skipped) {
    if (is_fence(s.rung))
      why.push_back(std::string(s.rung == Rung::fence ? "the fence" : "the fence-front rung") + " did not run: " + s.reason);
    if (s.rung == Rung::sanitizer) why.push_back("the sanitizer did not run: " + s.reason);
  }
  if (!fence_ran && std::none_of(runs.begin(), runs.end(), [](const RunJudgement& j) { return is_fence(j.rung); }) &&
      std::none_of(skipped.begin(), skipped.end(), [](const SkippedRung& s) { return is_fence(s.rung); }))
    why.push_back("the fence rung was not asked for");
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

// Every failing run failed because CUDA could not start (no driver, no device, a
// mismatched driver): the machine, not the program.
bool cuda_unavailable(const std::vector<RunJudgement>& runs) {
  bool any = false;
  for (const auto& j : runs) {
    if (!j.failed()) continue;
    if (!j.error || !j.error->error_class || !evidence::cuda_could_not_start(*j.error->error_class)) return false;
    any = true;
  }
  return any;
}

}  // namespace

int exit_code_of(const RunVerdict& v, bool interrupted) {
  return report::exit_code_for(v.kind, interrupted, v.cuda_could_not_start);
}

std::vector<RungStats> rung_stats(const std::vector<RunJudgement>& runs) {
  std::vector<RungStats> out;
  for (const Rung r : all_rungs()) {
    RungStats s;
    s.rung = r;
    for (const auto& j : runs) {
      if (j.rung != r) continue;
      ++s.runs;
      if (j.failed()) ++s.failures;
      ++s.outcomes[to_string(j.outcome)];
    }
    if (s.runs == 0) continue;
    const auto series = repeat::repeat_stats(s.outcomes, s.failures);
    s.ci = stats::Interval{series.ci_low, series.ci_high};
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<std::pair<std::size_t, std::string>> best_evidence(const std::vector<RunJudgement>& runs) {
  std::optional<std::pair<std::size_t, std::string>> best;
  int best_score = -1;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].failed()) continue;
    auto [score, line] = evidence_of(runs[i]);
    if (genuine_fault(runs[i])) score += 10;  // a fault the fence cannot have caused first
    if (score > best_score) {
      best_score = score;
      best = std::make_pair(i, std::move(line));
    }
  }
  return best;
}

RunVerdict decide_run_verdict(const std::vector<RunJudgement>& judged, const std::vector<SkippedRung>& skipped) {
  RunVerdict v;
  // A failure a rung's own setting caused is the tool's: not counted against the program.
  std::vector<RunJudgement> runs = judged;
  std::set<std::string> broken;
  for (auto& j : runs) {
    if (j.broken_by.empty()) continue;
    if (broken.insert(j.broken_by).second)
      v.notes.push_back(std::string(to_string(j.rung)) + ": " + j.broken_by +
                        " (the rung's own setting, not the program's failure: not counted, and the run checked nothing)");
    j.outcome = RunOutcome::clean;
    j.reason = "not counted: " + j.broken_by;
  }
  v.rungs = rung_stats(runs);
  v.coverage = ladder_coverage(runs);
  // Rungs skipped for the same reason (a named hang, a stop) share one note.
  for (std::size_t i = 0; i < skipped.size();) {
    std::string rungs = to_string(skipped[i].rung);
    std::size_t next = i + 1;
    for (; next < skipped.size() && skipped[next].reason == skipped[i].reason; ++next)
      rungs += std::string(", ") + to_string(skipped[next].rung);
    v.notes.push_back(rungs + " did not run: " + skipped[i].reason);
    i = next;
  }
  std::set<int> machine;
  for (const auto& j : runs)
    for (const int x : j.machine_xids)
      if (machine.insert(x).second)
        v.notes.push_back(fmt::format("Xid {} in the kernel log of a run: {} (points at the machine, not the program)", x,
                                      host::xid_meaning(x).summary));

  std::set<std::string> noted;
  for (const auto& j : runs)
    for (const auto& n : j.fence_notes)
      if (noted.insert(n).second) v.notes.push_back("fence: " + n);
  for (const auto& j : runs)
    for (const auto& n : j.site_notes)
      if (noted.insert(n).second) v.notes.push_back("core dump: " + n);
  std::vector<std::string> escapes;
  for (const auto& j : runs)
    for (const auto& e : j.fence_escapes)
      if (std::find(escapes.begin(), escapes.end(), e) == escapes.end()) escapes.push_back(e);
  for (const auto& e : escapes) v.notes.push_back("outside the fence: " + e);

  if (runs.empty()) {
    v.kind = VerdictKind::inconclusive;
    v.reason = "no rung ran";
    return v;
  }
  if (runs.front().outcome == RunOutcome::does_not_start) {
    v.kind = VerdictKind::does_not_start;
    v.reason = runs.front().reason;
    return v;
  }
  if (const auto ev = best_evidence(runs)) {
    v.evidence_run = ev->first;
    v.evidence = ev->second;
    // A site with no buffer (a native run has no allocation records): the buffer a fence
    // rung placed the same fault in follows it.
    if (const auto& a = runs[ev->first].attribution; !(a && a->allocation && a->certain))
      for (const auto& j : runs)
        if (is_fence(j.rung) && j.failed() && j.attribution && j.attribution->allocation && j.attribution->certain) {
          v.evidence += fmt::format("; the {} rung places it: {}", to_string(j.rung), j.attribution->summary);
          break;
        }
  }
  for (const auto& s : v.rungs)
    if (s.failures > 0) v.notes.push_back(rate(s));

  const bool any_failed = std::any_of(runs.begin(), runs.end(), [](const RunJudgement& j) { return j.failed(); });
  const bool any_fault = std::any_of(runs.begin(), runs.end(), [](const RunJudgement& j) {
    return j.outcome == RunOutcome::cuda_error || j.outcome == RunOutcome::crashed ||
           j.outcome == RunOutcome::slack_write;
  });

  if (!any_failed) {
    // Only the runs the tool did not break count: a broken run checked nothing.
    std::size_t counted = 0;
    for (const auto& j : runs) counted += j.broken_by.empty() ? 1 : 0;
    const auto all_of_rung = [&](auto in_rung, auto pred) {
      bool any = false;
      for (const auto& j : runs) {
        if (!j.broken_by.empty() || !in_rung(j.rung)) continue;
        any = true;
        if (!pred(j)) return false;
      }
      return any;
    };
    const auto fenced = [](Rung r) { return is_fence(r); };
    const auto sanitized = [](Rung r) { return r == Rung::sanitizer; };
    // Allocations a fenced run had to leave unfenced (managed memory, a pool it does not
    // see) were not watched: the fence alone cannot call the program clean then.
    const bool fence_ok =
        v.coverage.unfenced.empty() &&
        all_of_rung(fenced, [](const RunJudgement& j) { return j.fence && (j.fence->effective || j.fence->cuda_unused); });
    // A program that never called CUDA: the interposer saw no driver call, or memcheck saw
    // it end before its first one.
    const bool no_cuda_fenced = all_of_rung(fenced, [](const RunJudgement& j) { return j.fence && j.fence->cuda_unused; });
    const bool no_cuda_memcheck = all_of_rung(sanitized, [](const RunJudgement& j) { return j.no_cuda_call; });
    const bool fenced_run_counted = all_of_rung(fenced, [](const RunJudgement&) { return true; });
    const bool no_cuda = no_cuda_fenced || (no_cuda_memcheck && !fenced_run_counted);
    const bool memcheck_ok = all_of_rung(sanitized, [](const RunJudgement& j) {
      // Records of API errors the program handled (it exited 0) are no findings.
      return j.outcome == RunOutcome::clean && j.memcheck_kernels.empty() &&
             (j.no_cuda_call || (j.sanitizer && std::all_of(j.sanitizer->findings.begin(), j.sanitizer->findings.end(),
                                                            [](const sanitizer::Finding& f) { return f.api.has_value(); })));
    });
    if (!escapes.empty()) {
      // Whatever else ran clean, a process that used CUDA unfenced was not watched.
      v.kind = VerdictKind::inconclusive;
      v.reason = "no run failed, but a process of the run may have used CUDA outside the fence: " + escapes.front();
      std::erase(v.notes, "outside the fence: " + escapes.front());  // the reason says it
    } else if (fence_ok || memcheck_ok) {
      v.kind = VerdictKind::clean;
      v.reason = fmt::format("all {} runs clean{}; {}", counted,
                             counted < runs.size()
                                 ? fmt::format(" ({} broken by a setting of cudadiag's own not counted)",
                                               runs.size() - counted)
                                 : std::string(),
                             no_cuda_fenced ? "the program never used CUDA (the interposer loaded and saw no CUDA driver "
                                              "call): nothing to fence"
                             : no_cuda ? "the program never used CUDA (memcheck saw it end before its first CUDA "
                                         "call): nothing to check"
                             : fence_ok ? "the fence was effective in every fenced run"
                             : v.coverage.unfenced.empty()
                                 ? "memcheck found nothing"
                                 : "memcheck found nothing (the verdict rests on it: the fence could not see every "
                                   "allocation)");
      if (const auto d = directions_text(v.coverage); !d.empty() && !no_cuda) v.reason += "; checked " + d;
      // A program that never called the driver had no device memory to watch: what the
      // rungs could or could not have seen in it says nothing.
      if (no_cuda) v.coverage.seen.clear(), v.coverage.unseen.clear();
    } else {
      v.kind = VerdictKind::inconclusive;
      std::string why = blind_spots(runs, skipped);
      for (const auto& [reason, n] : v.coverage.unfenced)
        why += fmt::format("{}{} allocation(s) not fenced ({})", why.empty() ? "" : "; ", n, reason);
      const bool all_broken =
          std::any_of(runs.begin(), runs.end(), [](const RunJudgement& j) { return can_see_overruns(j.rung); }) &&
          std::all_of(runs.begin(), runs.end(),
                      [](const RunJudgement& j) { return !can_see_overruns(j.rung) || !j.broken_by.empty(); });
      v.reason = all_broken ? "no run failed, but every rung that could have seen a silent overrun was broken by a "
                              "setting of cudadiag's own, so nothing was checked: " + why
                            : "no run failed, but nothing could have seen a silent overrun: " + why;
      if (std::none_of(runs.begin(), runs.end(), [](const RunJudgement& j) { return j.rung == Rung::sanitizer; }))
        v.notes.push_back("run with --sanitize always to put the program under memcheck anyway");
    }
    return v;
  }

  if (cuda_unavailable(runs)) {
    v.kind = VerdictKind::inconclusive;
    v.cuda_could_not_start = true;
    v.reason = "CUDA could not start in the program (no driver or no device here), so nothing was tested: " +
               v.evidence;
    return v;
  }

  if (!any_fault) {
    // A run that reached its deadline inside a kernel: a GPU hang, the program's.
    // The run whose GPU core dump names where the warps wait comes first; else the fence's
    // launch that never returned.
    auto hung = std::find_if(runs.begin(), runs.end(), [](const RunJudgement& j) { return !named_hang(j).empty(); });
    if (hung == runs.end())
      hung = std::find_if(runs.begin(), runs.end(), [](const RunJudgement& j) { return j.hang.has_value(); });
    if (hung != runs.end()) {
      v.kind = VerdictKind::exposed;
      v.first_exposed_by = hung->rung;
      v.evidence_run = static_cast<std::size_t>(hung - runs.begin());
      const std::string named = named_hang(*hung);
      std::vector<std::string> parts;
      if (!named.empty())
        parts.push_back("a kernel never finished: its warps wait in " + named +
                        ", in the GPU core dump taken at the deadline");
      if (hung->hang) parts.push_back(hung->hang->line);
      if (hung->hang && !hung->hang->dump_line.empty()) parts.push_back(hung->hang->dump_line);
      v.evidence = std::string(to_string(hung->rung)) + ": ";
      for (std::size_t i = 0; i < parts.size(); ++i) v.evidence += (i ? "; " : "") + parts[i];
      v.reason = "a GPU hang: " + v.evidence;
      if (std::any_of(skipped.begin(), skipped.end(), [](const SkippedRung& s) { return s.after_named_hang; }))
        v.reason += "; the rungs above were not run: the hang is named";
      return v;
    }
    std::vector<std::string> flaky;
    for (const auto& s : v.rungs)
      if (s.failures > 0 && s.failures < s.runs) flaky.push_back(rate(s));
    if (!flaky.empty()) {
      v.kind = VerdictKind::flaky;
      v.reason = "flaky, without a CUDA error: " + flaky.front();
    } else {
      v.kind = VerdictKind::inconclusive;
      const auto first = std::find_if(runs.begin(), runs.end(), [](const RunJudgement& j) { return j.failed(); });
      v.reason = std::string("fails without a CUDA error or a signal, which looks like the program's own failure (") +
                 to_string(first->rung) + ": " + first->reason + ")";
    }
    return v;
  }

  std::optional<Rung> first;
  for (const auto& j : runs)
    if (genuine_fault(j) && (!first || j.rung < *first)) first = j.rung;
  if (!first) {
    const auto suspect = std::find_if(runs.begin(), runs.end(), [](const RunJudgement& j) { return j.fence_suspicion.has_value(); });
    v.kind = VerdictKind::inconclusive;
    v.reason = "faults only under the fence, and " + *suspect->fence_suspicion;
    return v;
  }
  v.first_exposed_by = first;
  std::optional<Rung> every_run;
  for (const auto& s : v.rungs) {
    if (s.failures != s.runs) continue;
    const bool genuine = std::any_of(runs.begin(), runs.end(), [&](const RunJudgement& j) { return j.rung == s.rung && genuine_fault(j); });
    if (genuine) {
      every_run = s.rung;
      break;
    }
  }
  const RungStats* fs = stats_of(v.rungs, *first);
  if (every_run) {
    v.kind = VerdictKind::exposed;
    v.reason = fmt::format("exposed by the {} rung ({}/{} runs{}): {}", to_string(*first), fs->failures, fs->runs,
                           *every_run != *first ? fmt::format("; every run under {}", to_string(*every_run)) : std::string(),
                           v.evidence);
  } else {
    v.kind = VerdictKind::flaky;
    v.reason = "flaky: " + rate(*fs) + "; " + v.evidence;
  }
  return v;
}

}  // namespace cudadiag::run

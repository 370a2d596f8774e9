#pragma once
// What the rungs that ran could have seen, and what they could not: every verdict of
// `cudadiag run` states it, a clean one above all (a program is clean only as far as the
// ladder could look). Built from the judged runs: the fenced runs' rings (where the
// guards sat, how many allocations were fenced and why the others were not, whether the
// slack after each buffer was watched, the quarantine) and memcheck's runs.
// Pure: plain data in, plain data out.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/allocation.h"
#include "run/rungs.h"

namespace cudadiag::run {

struct RunJudgement;

// One fenced run's reach, from its interposer log.
struct FenceReach {
  FenceSide side = FenceSide::none;  // where the guards sat
  bool effective = false;            // fence_effective(): the guards could have caught an overrun
  std::uint64_t allocations = 0;
  std::uint64_t fenced = 0;
  std::uint64_t quarantine_limit_bytes = 0;  // freed ranges stay reserved up to this much
  std::uint64_t recycle_limit_bytes = 0;     // freed buffers kept mapped for recycling (no use-after-free watch)
  bool slack_watched = false;                // canaries in the slack after each fenced buffer
  std::map<std::string, std::uint64_t> unfenced;  // reason -> allocations (of the records kept)
  // Recorded, never fenced by the interposer, and no blind spot of the program's own
  // allocations: the mappings the program made itself (cuMemMap) and buffers imported
  // over CUDA IPC that their exporter had not fenced. Imports of fenced buffers are
  // guarded in the importing process too (ipc_imports).
  std::uint64_t program_mappings = 0;
  std::uint64_t unguarded_imports = 0;
  std::uint64_t ipc_imports = 0;
  // How far from its end (start) a buffer is watched: its guard (lib/fence/guard_layout.h).
  fence::GuardMode guard_mode = fence::GuardMode::scaled;
  std::uint64_t granularity = 0;         // one granule (0: nothing fenced)
  std::uint64_t guard_limit_bytes = 0;   // scaled: the most one buffer's guard may have
  std::uint64_t guard_total_limit_bytes = 0;
  std::uint64_t guards_cut = 0;          // buffers given a smaller guard than their size (the bounds)
};
FenceReach fence_reach_of(const InterposerLog& log, bool effective);

struct Coverage {
  bool past_end = false;       // an effective fenced run guarded the ends of buffers
  bool before_start = false;   // ... their starts
  bool slack_writes = false;   // writes into the bytes between a buffer's end and its guard
  bool use_after_free = false; // within the quarantine
  bool recycled = false;       // a fenced run kept freed buffers mapped for recycling
  bool memcheck = false;       // memcheck ran over the whole program and left a report
  std::optional<std::uint64_t> allocations;  // of the fenced run that fenced the fewest
  std::optional<std::uint64_t> fenced;
  // Allocations some fenced run could not fence, by reason ("managed memory": 1).
  std::map<std::string, std::uint64_t> unfenced;
  std::uint64_t program_mappings = 0;   // the most any fenced run recorded (FenceReach)
  std::uint64_t unguarded_imports = 0;
  std::uint64_t ipc_imports = 0;        // guarded imports of an effective fenced run
  // How far past the end (before the start) a guard reaches, in the effective fenced runs:
  // a buffer's own size up to guard_reach_bytes (scaled), or one granule (granule).
  bool guard_scaled = true;             // false: some effective fenced run had CUDADIAG_GUARD=granule
  std::optional<std::uint64_t> guard_reach_bytes;  // scaled: the per-buffer bound; granule: one granule
  std::uint64_t granularity = 0;
  std::uint64_t guard_total_limit_bytes = 0;
  std::uint64_t guards_cut = 0;         // the most any effective fenced run cut
  std::vector<std::string> seen;    // one item each: what could have been seen
  std::vector<std::string> unseen;  // what could not
};

// "past the end and before the start", "past the end", "" (none).
std::string directions_text(const Coverage& c);

// A run one of the tool's own settings broke (broken_by) checked nothing: it is skipped.
// A fenced run whose guard caught an overrun guarded that end, whatever else made its
// fence not effective: the coverage never contradicts an exposure.
Coverage ladder_coverage(const std::vector<RunJudgement>& runs);

// Whether an overrun could have gone unseen by every fenced run: no effective fenced run,
// or some allocations left unfenced for a reason memcheck can still see past (managed
// memory, a pool the fence does not see, stream capture, a failed VMM call).
bool fence_blind_somewhere(const Coverage& c);

// Whether the sanitizer rung runs, asked before it with the runs so far. --sanitize
// always/never decide alone; auto runs memcheck when an earlier rung failed, and also
// when nothing failed but no fenced run could have seen an overrun in some allocations
// (fence_blind_somewhere, in a program that used CUDA): the verdict then rests on
// memcheck. A kernel the fence already suspects (the newest launch passed the buffer a
// failing fenced run attributed its fault to) limits memcheck to that kernel.
struct MemcheckPlan {
  bool run = false;
  std::string reason;       // why it runs, or why not (for the skipped list)
  std::string kernel;       // "": every kernel; else the suspect's name without its parameters
};
MemcheckPlan plan_memcheck(SanitizeMode mode, const std::vector<RunJudgement>& earlier);

// "fill_bytes(unsigned char*, unsigned long, int)" -> "fill_bytes"; "void ns::k<float>(float*)" -> "ns::k".
std::string kernel_base_name(const std::string& demangled);

}  // namespace cudadiag::run

#pragma once
// The ladder of `cudadiag run -- CMD`: the user's program runs once per rung (times
// --repeat), each rung with its settings applied before CUDA starts:
//   native     as given
//   blocking   CUDA_LAUNCH_BLOCKING=1 and every framework's caching allocator off
//   fence        caching off + LD_PRELOAD of the fence interposer (libcudadiag_fence.so),
//                every allocation flush against a guard at its end: overruns fault;
//                CUDA_LAUNCH_BLOCKING=1 too under --no-coredump (without a site run, the
//                ring's newest launch must be the faulting one)
//   fence-front  the same with the guard before the start: underruns fault (one run more
//                buys the other direction; a buffer cannot end and start at a granule
//                boundary at once)
//   sanitizer  blocking + compute-sanitizer memcheck around the command
// Rungs run bottom-up in this order, whatever order --rungs lists them in: a rung that
// exposes a fault is meaningful only next to the cheaper rungs below it that did not.
// Pure planning: nothing here starts a process or reads the environment.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "profiles/sanitizer_tool.h"
#include "run/allocation.h"

namespace cudadiag::run {

enum class Rung { native, blocking, fence, fence_front, sanitizer };
const char* to_string(Rung r);  // "fence-front" for fence_front
// The rungs that run under the fence interposer (fence, fence-front).
bool is_fence(Rung r);
// Every rung, in ladder order.
const std::vector<Rung>& all_rungs();
std::optional<Rung> rung_from_name(std::string_view name);

// "--rungs native,blocking,fence" -> the rungs in ladder order. Throws UsageError naming
// --rungs and the word for an unknown, empty or repeated name.
std::vector<Rung> parse_rungs(std::string_view text);

// --sanitize: auto runs the sanitizer rung only when an earlier rung found something.
enum class SanitizeMode { automatic, always, never };
const char* to_string(SanitizeMode m);
SanitizeMode parse_sanitize_mode(std::string_view text);  // auto | always | never

// ---- Framework caching: what the blocking rung sets ------------------------------------
// Caching allocators hand out pieces of large slabs: an overrun lands in the slab and
// stays silent, and neither the fence nor memcheck sees the piece's real end. Each
// framework has its own switch; the blocking, fence and sanitizer rungs set all of them
// (a variable a program does not read is harmless).
// CuPy and RAPIDS RMM pools have no environment switch: the fence sees only their slabs,
// and fence_effective() says so when allocations are few against many launches.
enum class Verification {
  device,      // observed on the device with this project's scripts
  documented,  // taken from the framework's documentation; not yet observed here
};
const char* to_string(Verification v);

struct CachingSetting {
  std::string_view framework;
  std::string_view variable;
  std::string_view value;
  std::string_view effect;    // what the setting changes
  Verification verified;
  std::string_view evidence;  // where it is documented, or which run observed it
};
std::span<const CachingSetting> caching_off_settings();

// Removed from the environment in the blocking, fence and sanitizer rungs: allocator
// configurations that move allocations off cudaMalloc even with caching off.
std::span<const std::string_view> caching_unset_variables();

// ---- Options and plan ---------------------------------------------------------------
inline constexpr std::string_view kInterposerFile = "libcudadiag_fence.so";

inline constexpr std::uint64_t kDefaultRecycleMb = 4096;

// compute-sanitizer's options the sanitizer rung adds to the sanitizer profile's: API
// error records off (`--report-api-errors no`), placed before its `--print-limit`.
inline constexpr std::string_view kApiErrorsOption = "--report-api-errors";
inline constexpr std::string_view kPrintLimitOption = "--print-limit";

struct RunOptions {
  std::vector<std::string> command;      // CMD ARGS... as the user gave them
  std::vector<Rung> rungs = all_rungs();
  SanitizeMode sanitize = SanitizeMode::automatic;
  bool stop_at_first = false;
  int repeat = 1;                        // each rung this many times
  std::uint32_t fence_align = 16;        // --fence-align: power of two, 1..4096
  // --fence-front: the fence rung guards the start instead, and the fence-front rung is not
  // planned (it would repeat it).
  FenceSide fence_side = FenceSide::back;
  std::optional<std::uint64_t> quarantine_mb;  // --fence-quarantine-mb; the interposer's default when absent
  // --fence-recycle-mb: the fence rung guarding the ends keeps this much freed memory mapped
  // for the next buffer of its size (no driver call per buffer life; no use-after-free
  // watch in that rung: the fence-front rung keeps the quarantine). 0: off.
  std::uint64_t recycle_mb = kDefaultRecycleMb;
  std::uint64_t sanitizer_padding = profiles::kSanitizerPaddingBytes;  // --padding, bytes (0: none)
  // Looked up by the caller, so that planning stays pure:
  std::string interposer_path;            // "" when not found next to the binary
  std::string preload_path;               // what LD_PRELOAD names (preload_path.h); "": interposer_path
  std::string interposer_missing_reason;  // why, when not found
  std::string sanitizer_path;             // "" when compute-sanitizer was not found
  std::string sanitizer_missing_reason;
  std::string work_dir;                   // ring files and sanitizer XML go here
  std::optional<std::string> user_ld_preload;  // the LD_PRELOAD the program would inherit
  // GPU core dumps (coredump/arming.h): a rung but the sanitizer's (memcheck owns the
  // exception there) that exposed a fault or a hang runs once more with dumps armed, into
  // work_dir (wants_site_run), unless `coredump` is false or the user set the driver's
  // variables (their names here, from the inherited environment and --env): those are
  // left as they are and cudadiag reads no dump of its own.
  bool coredump = true;
  std::vector<std::string> user_coredump_vars;
  // The user named the rungs (--rungs) or asked for memcheck (--sanitize always): every
  // rung asked for runs, even after a hang is named (hang_stop.h).
  bool rungs_asked = false;
};

// Throws UsageError naming the flag: empty command, repeat < 1 or > 10000, fence_align
// not a power of two in 1..4096, no rungs, an empty work_dir.
void check_run_options(const RunOptions& opts);

// Where the interposer is looked for, in order: next to the cudadiag executable (the
// build tree), then ../lib/cudadiag/ from it (an installed prefix: bin/cudadiag beside
// lib/cudadiag/libcudadiag_fence.so).
std::vector<std::string> interposer_candidates(std::string_view executable_path);

// Ours first, then the user's entries (ours removed from them if already there).
// ld.so accepts ':' and ' ' as separators; the result uses ':'.
std::string compose_ld_preload(std::string_view ours, const std::optional<std::string>& user);

struct PlannedRun {
  Rung rung = Rung::native;
  int repeat_index = 0;                        // 0-based
  std::vector<std::string> argv;               // wrapper (if any) + the command
  std::map<std::string, std::string> env_set;  // set before the program starts
  std::vector<std::string> env_unset;          // removed from the inherited environment
  std::string ring_path;      // fence rungs: where the interposer writes (CUDADIAG_RING)
  FenceSide fence_side = FenceSide::none;  // fence rungs: where the guards sit
  std::string sanitizer_xml;  // sanitizer: compute-sanitizer --save file
  std::string coredump_prefix;  // dumps armed: <work_dir>/<prefix>_<pid>.nvcudmp, pipe <prefix>-pipe_<pid>
};

// GPU core dumps are armed only in a second run of a rung that exposed a fault or a hang
// (unless --no-coredump): measured on an H100 (driver 580.159.04), a write one element past a
// fenced allocation went unreported to the program while dumps were armed (exit 0, an
// Xid 31 of the UNRECOGNIZED form), so an armed rung could call a faulty program clean.
// The verdict rests on the unarmed runs; the site run adds the site.
bool wants_site_run(const RunOptions& opts, Rung rung);
// The same run with dumps armed into opts.work_dir (and its own ring on a fence rung),
// its end held by the interposer for the dump (preloaded with no fence on a rung that
// runs without it, when it was found).
PlannedRun armed_for_site(const PlannedRun& run, const RunOptions& opts);

struct RungPlan {
  Rung rung = Rung::native;
  std::string skip_reason;   // non-empty: this rung cannot run (tool missing, --sanitize never)
  bool conditional = false;  // --sanitize auto: run only if sanitizer_should_run()
  std::vector<PlannedRun> runs;  // opts.repeat of them; empty when skipped
};

// One plan per rung of the ladder, in ladder order. --sanitize always adds the sanitizer
// rung to --rungs; never keeps it, skipped, so that the report says why it did not run.
std::vector<RungPlan> plan_rungs(const RunOptions& opts);

// A sanitizer run limited to the kernels whose name contains `kernel` (compute-sanitizer
// --kernel-name kns=<substring>): memcheck's slowdown applies to that kernel only. The
// option goes before the command (its last command_size arguments).
void limit_memcheck_to_kernel(PlannedRun& run, const std::string& kernel, std::size_t command_size);

// ---- Ladder control ------------------------------------------------------------------
// What the ladder needs to know of a finished run (judge.h: status_of()).
struct RunStatus {
  Rung rung = Rung::native;
  bool started = true;  // false: the command did not start (exec failed, not found)
  bool failed = false;  // CUDA error, crash, non-zero exit or timeout
};

// Asked after every run, with the runs so far in order; rung_complete: the last run was
// its rung's last repeat. False once a run did not start (no later run can start
// either), and with --stop-at-first once a completed rung had a failing run: every
// repeat of that rung runs, so that its failure rate is known.
bool ladder_continues(bool stop_at_first, std::span<const RunStatus> done, bool rung_complete);

// Under --sanitize auto: whether an earlier rung found something. always/never decide alone.
bool sanitizer_should_run(SanitizeMode mode, std::span<const RunStatus> earlier);

}  // namespace cudadiag::run

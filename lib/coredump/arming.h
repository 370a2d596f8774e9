#pragma once
// GPU core dumps armed for a child process, and what the parent does with them after it:
// the driver's variables (CUDA_ENABLE_COREDUMP_ON_EXCEPTION, CUDA_COREDUMP_*), the files
// found in the run's private scratch folder, the user-triggered pipe of a hang, and the
// dumps read into typed sites (report/fault_site.h), kept or removed.
//
// The flags skip every memory image (global, shared, local, constant banks) and the
// non-relocated ELF images: what is left (tables, registers, relocated cubins) is what
// the site needs, a few hundred KB for a small kernel, and writing it took about 0.9 s on
// an H100 for 64 blocks of 256 threads.
//
// skip_abort is not set: the driver aborts the process right after the dump (SIGABRT,
// exit 134), so the program never prints its own error text, but it can never go on as
// if nothing happened. With skip_abort, on an H100 (driver 580.159.04), the fault
// catalog's children saw success where the exception had happened (a device assert, a
// misaligned vector load, fenced overruns and underruns, a use after free: "ok" instead
// of 710, 716 and 700), and two nvcc programs saw cudaSuccess although the dump was
// written. A dump that exists proves the exception by itself, and a run killed by
// SIGABRT with one is judged from it.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "coredump/disassembler.h"
#include "report/fault_site.h"

namespace cudadiag::coredump {

inline constexpr std::string_view kEnableVar = "CUDA_ENABLE_COREDUMP_ON_EXCEPTION";
inline constexpr std::string_view kFileVar = "CUDA_COREDUMP_FILE";
inline constexpr std::string_view kFlagsVar = "CUDA_COREDUMP_GENERATION_FLAGS";
inline constexpr std::string_view kUserTriggerVar = "CUDA_ENABLE_USER_TRIGGERED_COREDUMP";
inline constexpr std::string_view kPipeVar = "CUDA_COREDUMP_PIPE";
inline constexpr std::string_view kGenerationFlags =
    "skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory";
// Why skip_abort is not set, for the report (see above).
inline constexpr std::string_view kSkipAbortReason =
    "no skip_abort: the driver aborts the program right after the dump (exit 134); with skip_abort programs were "
    "seen to go on as if the exception had not happened";

// The hang trigger: this many bytes written into the driver's pipe (a single byte may
// sit in the pipe buffer unread).
inline constexpr std::size_t kTriggerBytes = std::size_t{1} << 20;
// How long a trigger waits on a full pipe for the driver to drain it.
inline constexpr std::chrono::milliseconds kTriggerWait{2000};

// A variable the driver reads for core dumps (CUDA_ENABLE_COREDUMP_ON_EXCEPTION,
// CUDA_ENABLE_USER_TRIGGERED_COREDUMP, CUDA_COREDUMP_*, CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION).
bool is_coredump_variable(std::string_view name);
// Those of `names` (the program's environment): when the user set any, cudadiag leaves
// dumps to the user's settings (it overwrites none of them) and reads no dump itself.
std::vector<std::string> user_coredump_variables(const std::vector<std::string>& names);
// The names of this process's own environment that are core-dump variables.
std::vector<std::string> inherited_coredump_variables();
// What a command says once when the user's variables keep it from arming dumps: "GPU core
// dumps not armed by cudadiag: the program's environment sets CUDA_COREDUMP_FILE (kept as
// they are; cudadiag reads no dump of its own)".
std::string user_settings_line(const std::vector<std::string>& user_vars);

// Dumps of one run: <dir>/<prefix>_%p.nvcudmp, the hang pipe <dir>/<prefix>-pipe_%p.
struct DumpNames {
  std::string dir;
  std::string prefix;
  std::string file_pattern() const;  // the value of CUDA_COREDUMP_FILE
  std::string pipe_pattern() const;  // the value of CUDA_COREDUMP_PIPE
};

// The variables that arm the dumps (and the user-triggered pipe when `pipe`).
std::map<std::string, std::string> arming_env(const DumpNames& names, bool pipe);

// The dump files of the run (regular files named <prefix>_<digits>.nvcudmp, never a link), sorted.
std::vector<std::string> find_dumps(const DumpNames& names);
// The driver's pipes of the run (FIFOs named <prefix>-pipe_<digits>).
std::vector<std::string> find_pipes(const DumpNames& names);

// Writes up to kTriggerBytes into each pipe without ever blocking (O_NONBLOCK, a FIFO
// checked after open, links refused; a full pipe waited on with poll, kTriggerWait at
// most). Returns the pipes that took at least one byte.
std::vector<std::string> trigger_pipes(const std::vector<std::string>& pipes, std::size_t bytes = kTriggerBytes);

// Whether the dumps a trigger asked for are complete: polled; true once `expected` dumps
// (at least one) exist and none changed size since the previous poll, `settle` apart.
class DumpWatcher {
 public:
  DumpWatcher(DumpNames names, std::size_t expected, std::chrono::milliseconds settle = std::chrono::milliseconds(500));
  bool complete();

 private:
  DumpNames names_;
  std::size_t expected_;
  std::chrono::milliseconds settle_;
  std::map<std::string, std::uint64_t> sizes_;
  std::chrono::steady_clock::time_point last_change_{};
};

struct CollectOptions {
  std::uint64_t max_bytes = std::uint64_t{512} << 20;  // larger dumps are not read (said so)
  std::size_t max_dumps = 8;                           // more are counted, not read
  std::string keep_dir;                                // non-empty: dumps are kept there, else removed
  DisassembleFn disassemble;                           // empty: no faulting instruction, no address
  std::string no_disassembler_reason;
};

struct Collected {
  std::vector<report::FaultSite> sites;
  std::vector<std::string> notes;  // dumps too large, too many, not kept
};

// Reads every dump of the run into a site (its size and read time with it), keeps it in
// keep_dir or removes it (a kept file is written through util/atomic_file.h: a new name, or an
// atomic replacement, never through a link it refuses). Never throws for what a dump holds: an unreadable dump is a site that says so.
Collected collect_dumps(const DumpNames& names, const CollectOptions& opts);

}  // namespace cudadiag::coredump

#pragma once
// Everything the interposer recorded in one fenced run. The file CUDADIAG_RING names is
// claimed by the first process that used CUDA; every further CUDA process of the command
// (a fork, a worker, the second program of a script) records into "<file>.<pid>". The
// judge gets one log: the allocations and launches of the process that faulted, with
// counters summed over all of them (whether the fence could see the program's memory is
// a question about every process it ran).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "run/allocation.h"
#include "run/ring_reader.h"

namespace cudadiag::run {

struct ProcessRing {
  std::filesystem::path file;
  RingRead read;
};

struct FenceRecords {
  std::vector<ProcessRing> rings;  // the main file first, then "<file>.<pid>" by pid

  // The processes that recorded (readable rings with an owner), main file first.
  std::vector<int> pids() const;
};

FenceRecords read_fence_records(const std::filesystem::path& ring_file);

struct JudgedLog {
  std::optional<InterposerLog> log;  // nullopt: nothing readable
  std::string error;                 // why not, or what was unreadable beside it
  int process = 0;                   // whose allocations and launches `log` holds
};

// Fills AllocationRecord::import of each buffer `log` (the ring of `importer_pid`)
// imported over CUDA IPC, from the ring of the process that exported it.
void join_imports(InterposerLog& log, int importer_pid, const FenceRecords& records);

// The log of `faulting_pid` when one of the rings is that process's (an Xid 31 names
// the pid), else the main file's, its imports joined with their exporters' records; its
// summary sums every readable ring's counters, and it carries every ring's process
// events, slack writes and failed CUDA IPC hand-overs, and the state of the ring files.
JudgedLog log_for_judging(const FenceRecords& records, std::optional<int> faulting_pid);

// The allocations and launches of the process that owns rings[ring] (its imports joined),
// to attribute that process's own fault; its summary is that ring's only.
InterposerLog process_log(const FenceRecords& records, std::size_t ring);

}  // namespace cudadiag::run

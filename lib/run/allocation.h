#pragma once
// What the interposer saw of a program's device memory and kernel launches, as the
// parent reads it back after the program ended (however it ended). Produced by the
// ring reader (lib/run/ring_reader.h), consumed by attribution and the report.
// Plain data: no CUDA, no JSON. The fields a record carries as the interposer wrote them
// come from the ring's field lists (lib/fence/ring_format.h, CUDADIAG_RING_*_FIELDS).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fence/guard_layout.h"
#include "fence/ring_format.h"

namespace cudadiag::run {

// Where the unmapped guard of a fenced allocation sits (none: not fenced, see
// unfenced_reason).
using FenceSide = fence::Side;

// The exporter's side of a buffer imported over CUDA IPC, found by joining the rings of a
// run (fence_records.h): the importing process, and the exporter's allocation record.
struct IpcImport {
  int importer_pid = 0;            // the process that mapped the import (its ring's owner)
  bool exporter_found = false;     // the exporter's ring held the allocation's record
  std::uint64_t bytes = 0;         // the exporter's allocation, as its record says
  std::string api;                 // "cuMemAlloc_v2", ...
  FenceSide side = FenceSide::none;
  bool freed = false;              // the exporter had freed it
};

struct AllocationRecord {
  std::uint64_t seq = 0;           // order among all allocation events of the process
  // address, bytes, mapped_begin, mapped_end, guard_begin, guard_end, stream, context,
  // device, origin_pid, origin_seq, guard_wanted
  CUDADIAG_RING_ALLOCATION_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_SKIP)
  FenceSide side = FenceSide::none;
  bool freed = false;              // the program freed it: pages unmapped, range reserved
  bool quarantine_released = false;  // the reservation was given back: a later use of
                                     // the range no longer faults for sure
  std::string api;                 // entry point that allocated: "cuMemAlloc_v2", ...
  std::string unfenced_reason;     // side == none: why ("managed memory", "VMM failed: 2")
  std::optional<std::uint32_t> site;  // where it was made: an index into InterposerLog::sites
  std::optional<IpcImport> import;    // origin_pid != 0: filled when the rings of the run are joined

  std::uint64_t guard_bytes() const { return guard_end > guard_begin ? guard_end - guard_begin : 0; }
};

// A Python frame of an allocation site, as the interposer read it.
struct PythonFrameRecord {
  std::string file;       // cut to its last bytes when long (file_cut)
  std::int32_t line = 0;
  std::string function;
  bool user = false;      // outside the interpreter's own modules and installed packages
  bool file_cut = false;
};

// Where allocations were made: the host call stack (return addresses, innermost first) and
// the Python frames (the innermost, then the user's), as recorded.
struct AllocationSite {
  bool recorded = false;  // false: the record was lost (torn, or past the end of the file)
  std::vector<std::uint64_t> frames;
  std::vector<PythonFrameRecord> python;
  // Empty when the frames were read or there was no interpreter; else why they were not.
  std::string python_note;
};

// A loaded object of the program: return addresses in [begin, end) are `address - bias` in `path`.
struct ModuleRecord {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t bias = 0;
  std::string path;
};

struct LaunchRecord {
  std::uint64_t seq = 0;        // order among all launches of the process
  std::string kernel;           // demangled when possible, else the mangled name
  // function, stream, context, grid, block, dynamic_smem, device
  CUDADIAG_RING_LAUNCH_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_SKIP)
  std::string api;              // "cuLaunchKernel", "cuLaunchKernelEx", ...
  // Kernel arguments whose value lies inside a known allocation (address, as seen).
  std::vector<std::uint64_t> pointer_args;
  bool returned = false;        // the driver's launch call returned (under CUDA_LAUNCH_BLOCKING:
                                //   the kernel finished)
};

// Bytes of a fenced buffer's alignment slack (between its end and its guard) that lost
// their canary: a write past the end that the guard could not catch.
struct SlackWriteRecord {
  // allocation_seq, address, bytes, first_offset, last_offset, slack_bytes, pid
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_SKIP)
  std::string seen_at;               // "seen at free", "seen at exit"
};

// A CUDA IPC hand-over of fenced memory that failed (the program got an error for it).
struct IpcFailureRecord {
  // allocation_seq, pid, peer_pid, result
  CUDADIAG_RING_IPC_FAILURE_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_SKIP)
  std::string what;                  // "cuMemImportFromShareableHandle failed", ...
};

// A TMA descriptor the program encoded (cuTensorMapEncode*), and where its base lies.
struct TmaMapRecord {
  std::uint64_t seq = 0;                 // order among all encodes of the process
  std::string api;                       // "cuTensorMapEncodeTiled", ...
  // address, span_bytes, mapped_after, allocation_address, allocation_bytes, allocation_seq,
  // data_type, rank, interleave, swizzle, oob_fill, result
  CUDADIAG_RING_TMA_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_SKIP)
  bool in_fenced = false;                // the base lies in a live fenced buffer
  bool near_guard = false;               // mapped_after < 128 KiB: TMA's 128 KiB out-of-bounds
                                         //   address mode may touch the guard
  bool past_buffer = false;              // the dims and strides reach past the buffer's last byte
};

// Counters of the whole process, kept even when the rings wrapped.
struct InterposerSummary {
  bool loaded = false;              // the interposer's constructor ran in the program
  bool cuda_seen = false;           // the program resolved any CUDA driver entry point
  std::uint64_t allocations = 0;    // allocation calls seen
  std::uint64_t fenced = 0;         // of which placed against a guard
  std::uint64_t frees = 0;
  std::uint64_t launches = 0;
  std::uint64_t quarantined_bytes = 0;  // address space still reserved for freed buffers
  std::uint64_t tma_encodes = 0;    // cuTensorMapEncode* calls: a fault may be the fence's
  std::uint64_t tma_near_guard = 0; // of which with their base less than 128 KiB before a guard
  std::uint64_t dropped_allocations = 0;  // records lost because the ring wrapped
  std::uint64_t dropped_launches = 0;
  std::uint64_t dropped_tma_maps = 0;
  std::uint32_t fence_align = 16;   // alignment of fenced pointers, bytes
  FenceSide side = FenceSide::none; // where the guards sat (the ring header's fence_side)
  std::uint64_t quarantine_limit_bytes = 0;  // freed ranges stay reserved up to this much
  std::uint64_t recycle_limit_bytes = 0;     // freed buffers kept mapped for recycling up to this much (0: none)
  std::uint64_t recycled = 0;                // allocations served by a recycled buffer
  bool slack_watched = false;       // canaries were written into the slack after fenced buffers
  std::uint64_t ipc_exports = 0;    // fenced buffers handed to other processes (CUDA IPC)
  std::uint64_t ipc_imports = 0;    // other processes' fenced buffers mapped with guards
  std::uint64_t program_mappings = 0;  // cuMemMap calls of the program: recorded, not fenced
  // How large the guards were (CUDADIAG_GUARD): scaled, as large as a buffer's mapping up to
  // guard_limit_bytes while all guards stay within guard_total_limit_bytes; else one granule.
  fence::GuardMode guard_mode = fence::GuardMode::scaled;
  std::uint64_t granularity = 0;             // VMM granule of the first fenced device (0: none fenced)
  std::uint64_t guard_limit_bytes = 0;
  std::uint64_t guard_total_limit_bytes = 0;
  std::uint64_t guards_cut = 0;              // allocations given a smaller guard than the per-buffer bound allows
  // The driver's answer (CUresult) when the interposer waited for the program's GPU work
  // at its end and that wait failed; 0: it did not fail, or never ran.
  int end_wait_result = 0;
};

// What happened to one process of the run, as the interposer saw it start or end.
struct ProcessEventRecord {
  int pid = 0;
  std::string what;       // "LD_PRELOAD restored", "escaped: statically linked ...", ...
  std::string program;    // the program started (or the library loaded with RTLD_DEEPBIND)
  bool escaped = false;   // the process may have used CUDA outside the fence
};

// Who recorded a ring (its owner): the process, and its rank where a launcher set one
// (fence/launcher_identity.h). Written once, when the process claimed the ring.
struct ProcessIdentity {
  bool recorded = false;  // false: the ring holds no identity (never claimed, or torn)
  // pid, rank, local_rank, world_size (-1: not set)
  CUDADIAG_RING_IDENTITY_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_SKIP)
  std::string exe;                // /proc/self/exe (its last bytes when long)
  std::string rank_from;          // the variable each was read from: "RANK", "SLURM_PROCID", ... ("": none)
  std::string local_rank_from;
  std::string world_size_from;
};

// A GPU a process used, as its ring recorded it the first time a context on it was current.
struct DeviceIdentity {
  // ordinal (as the process sees it), uuid_result, bus_id_result (CUresult; -1: not asked)
  CUDADIAG_RING_DEVICE_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_SKIP)
  std::string uuid;        // "GPU-8c6b2f1e-...", "" when unknown
  std::string pci_bus_id;  // as the driver wrote it ("0000:07:00.0"), "" when unknown
};

// The state of the ring files themselves: a verdict must not rest on what the tool broke.
struct RingHealth {
  std::string no_room;      // non-empty: why nothing was recorded ("the ring could not be written: no room in ...")
  bool cut_short = false;   // a ring file is shorter than its header says: a write past its end raises SIGBUS
  bool unreserved = false;  // a ring file's blocks were not reserved before it was mapped
};

struct InterposerLog {
  RingHealth ring;
  ProcessIdentity process;                    // whose allocations and launches these are
  std::vector<DeviceIdentity> devices;        // the GPUs it used, in the order first used
  std::uint64_t devices_lost = 0;             // beyond what the header keeps, or torn
  std::uint32_t processes_recorded = 1;       // processes of the run whose rings were read (fence_records.h)
  std::vector<ProcessEventRecord> process_events;  // every ring's, in the order recorded
  std::uint64_t process_events_lost = 0;           // beyond what the header keeps (counted only)
  std::uint64_t preloads_restored = 0;
  std::uint64_t escapes = 0;                       // processes that may have used CUDA unfenced
  InterposerSummary summary;
  std::vector<AllocationRecord> allocations;  // newest last; live and freed
  std::vector<LaunchRecord> launches;         // newest last (the ring's tail)
  std::vector<TmaMapRecord> tma_maps;         // newest last (the ring's tail)
  std::vector<SlackWriteRecord> slack_writes; // in the order found
  std::uint64_t slack_writes_lost = 0;        // found beyond what the header keeps
  std::vector<IpcFailureRecord> ipc_failures; // in the order they happened
  std::uint64_t ipc_failures_lost = 0;        // beyond what the header keeps
  std::vector<AllocationSite> sites;          // by index (AllocationRecord::site)
  std::vector<ModuleRecord> modules;          // in the order recorded
  std::uint64_t sites_dropped = 0;            // allocations whose site found the table full
  bool stacks_captured = false;               // host call stacks were captured at allocation
};

}  // namespace cudadiag::run

#pragma once
// The file the interposer (apps/interposer, loaded into the user's program) records
// into and the parent reads back (lib/run/ring_reader.h) after the program ended,
// however it ended. Plain structs, code tables and one field list per record kind, no
// dependencies: the writer is a preloaded library without the C++ library, the reader a
// host tool.
//
// File layout (host byte order; written and read on the same machine). kVersion changes
// with the layout, and a reader reads its own version only:
//
//   [0, kHeaderBytes)                          Header: counters, process events, slack writes,
//                                              CUDA IPC failures, who recorded (the owner's
//                                              pid, executable, rank) and its devices
//   [allocations_offset, + capacity * 128)     AllocationSlot: live allocations are kept;
//                                              freed ones are overwritten oldest first
//   [launches_offset, + capacity * 256)        LaunchSlot: a ring of the latest launches
//   [tma_offset, + capacity * 96)              TmaSlot: a ring of the latest encoded TMA
//                                              descriptors (cuTensorMapEncode*)
//   [names_offset, + names_capacity)           kernel names, each followed by a NUL
//   [sites_offset, + site_capacity * 496)      SiteSlot: where allocations were made,
//                                              filled once, never overwritten
//   [modules_offset, + module_capacity * 256)  ModuleSlot: the loaded objects the sites'
//                                              return addresses lie in
//
// The writer reserves the file's blocks (posix_fallocate) before it maps them, so that a
// write into the mapping never meets a full file system (SIGBUS in the program). When
// there is no room, the file is a header only (every capacity 0, kRingNoRoom set, the
// errno and the bytes it needed kept): the fence stays on and the counters count.
//
// A slot is complete when its stamp is 2 * seq + 2; the writer sets 2 * seq + 1 before it
// writes the fields, so a record that was being written when the process died is told
// apart ("torn") and dropped. Counters are per process and kept when the rings wrap.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fence/guard_layout.h"

namespace cudadiag::ring {

inline constexpr std::uint64_t kMagic = 0x00474e4952464443ull;  // "CDFRING\0"
inline constexpr std::uint32_t kVersion = 10;
inline constexpr std::uint32_t kHeaderBytes = 8192;
inline constexpr std::uint32_t kMaxPointerArgs = 8;
inline constexpr std::uint32_t kNamePrefixBytes = 96;
inline constexpr std::uint32_t kNoName = 0xffffffffu;

// Default and largest record counts (CUDADIAG_RING_ALLOCATIONS, CUDADIAG_RING_LAUNCHES,
// CUDADIAG_RING_TMA_MAPS, CUDADIAG_RING_NAMES_KB).
inline constexpr std::uint32_t kDefaultAllocationSlots = 16384;
inline constexpr std::uint32_t kDefaultLaunchSlots = 4096;
inline constexpr std::uint32_t kDefaultTmaSlots = 1024;
inline constexpr std::uint32_t kDefaultNameBytes = 1u << 20;
inline constexpr std::uint32_t kMaxSlots = 1u << 22;
inline constexpr std::uint32_t kMaxNameBytes = 64u << 20;
// Allocation sites and modules (CUDADIAG_RING_SITES, CUDADIAG_RING_MODULES).
inline constexpr std::uint32_t kDefaultSiteSlots = 4096;
inline constexpr std::uint32_t kDefaultModuleSlots = 1024;
inline constexpr std::uint32_t kMaxSiteSlots = 1u << 20;
inline constexpr std::uint32_t kMaxModuleSlots = 1u << 16;
inline constexpr std::uint32_t kNoSite = 0xffffffffu;
inline constexpr std::uint32_t kSiteFrames = 24;       // return addresses kept per site
inline constexpr std::uint32_t kPythonFrames = 2;      // the innermost frame and the user's
inline constexpr std::uint32_t kPythonFileBytes = 96;  // the path's last bytes, NUL-terminated
inline constexpr std::uint32_t kPythonFunctionBytes = 27;
inline constexpr std::uint32_t kModulePathBytes = 216;
// Header field `stack_flags`: what the sites hold.
inline constexpr std::uint32_t kStacksHost = 1;    // host call stacks were captured
inline constexpr std::uint32_t kStacksPython = 2;  // Python frames were read at least once
// SiteSlot field `python_state`: whether the Python frames could be read.
enum class PythonState : std::uint8_t {
  none = 0,            // no Python interpreter in the process
  read = 1,            // read from the allocating thread's own frames
  // 2 and 3 are not used
  no_python_code = 4,  // the allocating thread was running no Python code (PyTorch runs backward on threads of its own)
  unreadable = 5,      // not read: an interpreter other than CPython 3.9 to 3.13 with the GIL
};
// PythonFrame field `flags`.
inline constexpr std::uint8_t kPythonUserFrame = 1;  // outside the interpreter's and installed packages
inline constexpr std::uint8_t kPythonFileCut = 2;    // the path was cut to its last bytes

// Process events kept in the header (the counters count every one).
inline constexpr std::uint32_t kMaxProcessEvents = 16;
inline constexpr std::uint32_t kEventProgramBytes = 104;

// Slack writes kept in the header (the counter counts every one).
inline constexpr std::uint32_t kMaxSlackWrites = 16;
// What the slack after a fenced buffer is filled with.
inline constexpr std::uint8_t kSlackCanary = 0xcd;
// The most slack bytes checked per buffer (the alignment is at most 4096).
inline constexpr std::uint32_t kMaxSlackBytes = 4096;

// When a slack write was found (SlackWrite field `seen_at`).
enum class SlackCheck : std::uint8_t { free = 1, sync = 2, exit = 3 };

constexpr const char* slack_check_text(SlackCheck c) {
  switch (c) {
    case SlackCheck::free: return "seen at free";
    case SlackCheck::sync: return "seen at a synchronisation";
    case SlackCheck::exit: return "seen at exit";
  }
  return "seen";
}

// CUDA IPC of fenced memory that failed, kept in the header (the counter counts every one).
inline constexpr std::uint32_t kMaxIpcFailures = 4;

// The step of a CUDA IPC hand-over of fenced memory that failed (IpcFailure field `step`).
// The program got the driver's answer (exporter) or the failing call's error (importer).
enum class IpcStep : std::uint8_t {
  none = 0,
  server,       // exporter: its hand-over socket or thread could not be made (result: an errno)
  export_fd,    // exporter: cuMemExportToShareableHandle refused the buffer's memory
  connect,      // importer: the exporter's socket could not be reached (result: an errno)
  refused,      // importer: the exporter no longer has the buffer (freed), or the reply was not one
  import_fd,    // importer: cuMemImportFromShareableHandle
  reserve,      // importer: cuMemAddressReserve
  map,          // importer: cuMemMap
  set_access,   // importer: cuMemSetAccess
  no_context,   // importer: no current context to map it for
  count,
};

constexpr const char* ipc_step_text(IpcStep s) {
  switch (s) {
    case IpcStep::server: return "the exporter's hand-over socket could not be made";
    case IpcStep::export_fd: return "cuMemExportToShareableHandle refused the fenced buffer's memory";
    case IpcStep::connect: return "the exporting process could not be reached";
    case IpcStep::refused: return "the exporting process no longer had the buffer";
    case IpcStep::import_fd: return "cuMemImportFromShareableHandle failed";
    case IpcStep::reserve: return "cuMemAddressReserve failed";
    case IpcStep::map: return "cuMemMap failed";
    case IpcStep::set_access: return "cuMemSetAccess failed";
    case IpcStep::no_context: return "no current context to map it for";
    case IpcStep::none:
    case IpcStep::count: break;
  }
  return "unknown step";
}

// Who the owner of a ring is, as its launcher said (torchrun, mpirun, srun): the variable
// each of IdentitySlot's rank, local_rank and world_size was read from.
enum class LauncherVar : std::uint8_t {
  none = 0,         // not set by any launcher the interposer knows
  rank,             // RANK, LOCAL_RANK, WORLD_SIZE (torchrun, torch.distributed)
  local_rank,
  world_size,
  ompi_rank,        // OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE (Open MPI)
  ompi_local_rank,
  ompi_size,
  pmi_rank,         // PMI_RANK, PMI_SIZE (MPICH, Intel MPI)
  pmi_size,
  slurm_procid,     // SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS (srun)
  slurm_localid,
  slurm_ntasks,
  count,
};

constexpr const char* launcher_var_name(LauncherVar v) {
  switch (v) {
    case LauncherVar::rank: return "RANK";
    case LauncherVar::local_rank: return "LOCAL_RANK";
    case LauncherVar::world_size: return "WORLD_SIZE";
    case LauncherVar::ompi_rank: return "OMPI_COMM_WORLD_RANK";
    case LauncherVar::ompi_local_rank: return "OMPI_COMM_WORLD_LOCAL_RANK";
    case LauncherVar::ompi_size: return "OMPI_COMM_WORLD_SIZE";
    case LauncherVar::pmi_rank: return "PMI_RANK";
    case LauncherVar::pmi_size: return "PMI_SIZE";
    case LauncherVar::slurm_procid: return "SLURM_PROCID";
    case LauncherVar::slurm_localid: return "SLURM_LOCALID";
    case LauncherVar::slurm_ntasks: return "SLURM_NTASKS";
    case LauncherVar::none:
    case LauncherVar::count: break;
  }
  return "";
}

// The devices a process used, one record each (the header keeps kMaxDevices; the counter
// counts every one); the executable's path, cut to its last kExeBytes - 1 bytes.
inline constexpr std::uint32_t kMaxDevices = 16;
inline constexpr std::uint32_t kExeBytes = 256;
inline constexpr std::uint32_t kUuidBytes = 16;   // CUuuid
inline constexpr std::uint32_t kBusIdBytes = 16;  // "0000:07:00.0" and a NUL, as cuDeviceGetPCIBusId writes it

// Header field `ring_flags`.
inline constexpr std::uint32_t kRingReserved = 1;  // the file's blocks were reserved before mapping
inline constexpr std::uint32_t kRingNoRoom = 2;    // no room for the records: a header only

// What happened to a process of the run (ProcessEvent field `kind`).
enum class EventKind : std::uint16_t {
  none = 0,
  preload_restored,  // exec/spawn with an environment without the interposer: put back
  escaped_setid,     // exec/spawn of a set-user-ID/set-group-ID program: the loader ignores LD_PRELOAD
  escaped_static,    // exec/spawn of a statically linked program: nothing can be preloaded
  escaped_unreadable,  // exec/spawn of a program the interposer could not inspect
  escaped_foreign,   // exec/spawn of a program of another ELF class (32-bit): the interposer cannot load
  deepbind_cuda,     // CUDA loaded in a process that loaded a library with RTLD_DEEPBIND
  cuda_unseen,       // libcuda was loaded, but no CUDA call went through the interposer
  count,
};

constexpr const char* event_text(EventKind k) {
  switch (k) {
    case EventKind::preload_restored: return "LD_PRELOAD restored";
    case EventKind::escaped_setid:
      return "escaped: a set-user-ID or set-group-ID program (the loader ignores LD_PRELOAD)";
    case EventKind::escaped_static: return "escaped: statically linked (nothing can be preloaded)";
    case EventKind::escaped_unreadable: return "escaped: the program could not be inspected";
    case EventKind::escaped_foreign: return "escaped: a 32-bit program (the 64-bit interposer cannot load into it)";
    case EventKind::deepbind_cuda: return "CUDA loaded with RTLD_DEEPBIND: calls from it bypass the fence";
    case EventKind::cuda_unseen: return "libcuda was loaded, but no CUDA call went through the interposer";
    case EventKind::none:
    case EventKind::count: break;
  }
  return "unknown event";
}

// Whether a process of this kind may have used CUDA outside the fence.
constexpr bool event_escapes(EventKind k) { return k != EventKind::none && k != EventKind::preload_restored; }

// Where the guard of a fenced allocation sits; `none`: not fenced (lib/fence/guard_layout.h).
using Side = fence::Side;

// Entry points the interposer records, by code (slot fields `api`, `free_api`).
enum class Api : std::uint16_t {
  unknown = 0,
  cuMemAlloc_v2,
  cuMemAllocPitch_v2,
  cuMemAllocAsync,
  cuMemAllocAsync_ptsz,
  cuMemAllocFromPoolAsync,
  cuMemAllocFromPoolAsync_ptsz,
  cuMemAllocManaged,
  cuMemAllocHost_v2,
  cuMemHostAlloc,
  cuMemFree_v2,
  cuMemFreeAsync,
  cuMemFreeAsync_ptsz,
  cuMemFreeHost,
  cuLaunchKernel,
  cuLaunchKernel_ptsz,
  cuLaunchKernelEx,
  cuLaunchKernelEx_ptsz,
  cuLaunchCooperativeKernel,
  cuLaunchCooperativeKernel_ptsz,
  cuTensorMapEncodeTiled,
  cuTensorMapEncodeIm2col,
  cuTensorMapEncodeIm2colWide,
  cuMemMap,               // a mapping the program made itself (recorded, not fenced)
  cuMemUnmap,
  cuIpcOpenMemHandle_v1,  // memory another process exported over CUDA IPC (cuda.h names
  cuIpcOpenMemHandle_v2,  //   cuIpcOpenMemHandle the _v2 one)
  cuIpcCloseMemHandle,
  count,
};

constexpr const char* api_name(Api a) {
  switch (a) {
    case Api::cuMemAlloc_v2: return "cuMemAlloc_v2";
    case Api::cuMemAllocPitch_v2: return "cuMemAllocPitch_v2";
    case Api::cuMemAllocAsync: return "cuMemAllocAsync";
    case Api::cuMemAllocAsync_ptsz: return "cuMemAllocAsync_ptsz";
    case Api::cuMemAllocFromPoolAsync: return "cuMemAllocFromPoolAsync";
    case Api::cuMemAllocFromPoolAsync_ptsz: return "cuMemAllocFromPoolAsync_ptsz";
    case Api::cuMemAllocManaged: return "cuMemAllocManaged";
    case Api::cuMemAllocHost_v2: return "cuMemAllocHost_v2";
    case Api::cuMemHostAlloc: return "cuMemHostAlloc";
    case Api::cuMemFree_v2: return "cuMemFree_v2";
    case Api::cuMemFreeAsync: return "cuMemFreeAsync";
    case Api::cuMemFreeAsync_ptsz: return "cuMemFreeAsync_ptsz";
    case Api::cuMemFreeHost: return "cuMemFreeHost";
    case Api::cuLaunchKernel: return "cuLaunchKernel";
    case Api::cuLaunchKernel_ptsz: return "cuLaunchKernel_ptsz";
    case Api::cuLaunchKernelEx: return "cuLaunchKernelEx";
    case Api::cuLaunchKernelEx_ptsz: return "cuLaunchKernelEx_ptsz";
    case Api::cuLaunchCooperativeKernel: return "cuLaunchCooperativeKernel";
    case Api::cuLaunchCooperativeKernel_ptsz: return "cuLaunchCooperativeKernel_ptsz";
    case Api::cuTensorMapEncodeTiled: return "cuTensorMapEncodeTiled";
    case Api::cuTensorMapEncodeIm2col: return "cuTensorMapEncodeIm2col";
    case Api::cuTensorMapEncodeIm2colWide: return "cuTensorMapEncodeIm2colWide";
    case Api::cuMemMap: return "cuMemMap";
    case Api::cuMemUnmap: return "cuMemUnmap";
    case Api::cuIpcOpenMemHandle_v1: return "cuIpcOpenMemHandle";
    case Api::cuIpcOpenMemHandle_v2: return "cuIpcOpenMemHandle_v2";
    case Api::cuIpcCloseMemHandle: return "cuIpcCloseMemHandle";
    case Api::unknown:
    case Api::count: break;
  }
  return "unknown";
}

// Why an allocation was not fenced (slot field `unfenced_reason`).
enum class Unfenced : std::uint8_t {
  none = 0,          // nothing kept it from being fenced
  fence_off,         // CUDADIAG_FENCE_SIDE=none: recorded only
  managed_memory,
  host_memory,
  no_context,        // no current context: the driver's own allocator answered
  stream_capture,    // a stream-ordered allocation during graph capture
  custom_pool,       // a memory pool other than the device's default one
  foreign_stream,    // the stream belongs to another context
  vmm_failed,        // a VMM call failed (failed_call, failed_result say which and how)
  zero_bytes,        // a zero-byte request the driver answered itself
  too_large,         // a request whose size, rounded up to granules and a guard, would overflow
  program_mapped,    // the program mapped it itself (cuMemMap: NCCL's buffers, PyTorch's expandable segments)
  ipc_imported,      // imported over CUDA IPC by the driver's own call (the exporter's memory was not fenced)
  count,
};

constexpr const char* unfenced_text(Unfenced u) {
  switch (u) {
    case Unfenced::none: return "";
    case Unfenced::fence_off: return "fence off (CUDADIAG_FENCE_SIDE=none)";
    case Unfenced::managed_memory: return "managed memory";
    case Unfenced::host_memory: return "host memory";
    case Unfenced::no_context: return "no current context";
    case Unfenced::stream_capture: return "stream capture in progress";
    case Unfenced::custom_pool: return "memory pool other than the device's default";
    case Unfenced::foreign_stream: return "stream of another context";
    case Unfenced::vmm_failed: return "VMM failed";
    case Unfenced::zero_bytes: return "zero bytes";
    case Unfenced::too_large: return "too large to fence (its size rounded up overflows)";
    case Unfenced::program_mapped: return "mapped by the program itself (cuMemMap)";
    case Unfenced::ipc_imported: return "imported over CUDA IPC, not fenced by its exporter";
    case Unfenced::count: break;
  }
  return "unknown reason";
}

// The VMM step that failed (slot field `failed_call`).
enum class VmmCall : std::uint8_t {
  none = 0,
  granularity,
  reserve,
  create,
  map,
  set_access,
  count,
};

constexpr const char* vmm_call_name(VmmCall c) {
  switch (c) {
    case VmmCall::granularity: return "cuMemGetAllocationGranularity";
    case VmmCall::reserve: return "cuMemAddressReserve";
    case VmmCall::create: return "cuMemCreate";
    case VmmCall::map: return "cuMemMap";
    case VmmCall::set_access: return "cuMemSetAccess";
    case VmmCall::none:
    case VmmCall::count: break;
  }
  return "";
}

// Life of an allocation (slot field `state`, updated in place with one byte store).
enum class State : std::uint8_t {
  live = 0,
  freed = 1,             // unmapped; the range stays reserved: a use after free faults
  released = 2,          // freed and the reservation given back (quarantine full)
  freed_unguarded = 3,   // freed but left mapped (freed during graph capture, kept for recycling) or unfenced
};

// The driver calls the interposer makes on its own behalf, counted and timed in the
// header (`driver_calls`, `driver_ns`): what the fence costs, call by call.
enum class DriverCall : std::uint8_t {
  address_reserve = 0,  // cuMemAddressReserve
  create,               // cuMemCreate
  map,                  // cuMemMap
  set_access,           // cuMemSetAccess
  unmap,                // cuMemUnmap
  release,              // cuMemRelease
  address_free,         // cuMemAddressFree
  ctx_synchronize,      // cuCtxSynchronize before unmapping a freed buffer
  stream_synchronize,   // cuStreamSynchronize before unmapping a buffer freed stream-ordered
  kernel_lookup,        // cuFuncGetName + cuFuncGetParamInfo, once per kernel
  count,
};
inline constexpr std::uint32_t kDriverCallKinds = static_cast<std::uint32_t>(DriverCall::count);

constexpr const char* driver_call_name(DriverCall c) {
  switch (c) {
    case DriverCall::address_reserve: return "cuMemAddressReserve";
    case DriverCall::create: return "cuMemCreate";
    case DriverCall::map: return "cuMemMap";
    case DriverCall::set_access: return "cuMemSetAccess";
    case DriverCall::unmap: return "cuMemUnmap";
    case DriverCall::release: return "cuMemRelease";
    case DriverCall::address_free: return "cuMemAddressFree";
    case DriverCall::ctx_synchronize: return "cuCtxSynchronize";
    case DriverCall::stream_synchronize: return "cuStreamSynchronize";
    case DriverCall::kernel_lookup: return "kernel_lookup";
    case DriverCall::count: break;
  }
  return "unknown";
}

// Facts about an encoded TMA descriptor (TmaSlot field `flags`).
inline constexpr std::uint8_t kTmaInFenced = 1;        // the base lies in a live fenced buffer
inline constexpr std::uint8_t kTmaNearGuard = 2;       // ... less than kTmaOutOfBoundsReach before its guard
inline constexpr std::uint8_t kTmaPastBuffer = 4;      // dims and strides reach past the buffer's last byte
inline constexpr std::uint8_t kTmaInFreed = 8;         // the base lies in a freed (quarantined) buffer
inline constexpr std::uint8_t kTmaInUnfenced = 16;     // the base lies in memory the driver's allocator made

// A launch's grid or block dimensions.
struct Dim3 {
  std::uint32_t xyz[3] = {1, 1, 1};
  constexpr std::uint32_t& operator[](int i) { return xyz[i]; }
  constexpr std::uint32_t operator[](int i) const { return xyz[i]; }
  friend constexpr bool operator==(const Dim3& a, const Dim3& b) {
    return a.xyz[0] == b.xyz[0] && a.xyz[1] == b.xyz[1] && a.xyz[2] == b.xyz[2];
  }
};

// How cudadiag-ring-dump prints a value field: hex (addresses, handles), dec, dims (x,y,z).
enum class Shown : std::uint8_t { hex, dec, dims };

// The fields of each record kind, once, in slot order. The slots below, the writer's
// events (apps/interposer/ring_writer.h), the reader's records (lib/run/allocation.h),
// the copies between them and the dump's lines (lib/run/ring_text.h) are made from these
// lists by the macros that follow them. Two kinds of field:
//   VALUE(type, name, initial, shown)  carried as it is into the reader's record
//   CODE(type, name, initial)          kept as written; the reader says it in its own words
// `initial` is the writer's value where the caller sets none. Types are named from the
// namespace cudadiag (ring::...): the lists are expanded in the writer's and the reader's.
// Fields a slot keeps besides (the names region's references, the pointer arguments)
// follow its list's fields in the slot.

#define CUDADIAG_RING_ALLOCATION_FIELDS(VALUE, CODE)                                                      \
  VALUE(std::uint64_t, address, 0, hex)       /* the pointer handed to the program */                   \
  VALUE(std::uint64_t, bytes, 0, dec)         /* the bytes the program asked for */                     \
  VALUE(std::uint64_t, mapped_begin, 0, hex)  /* [mapped_begin, mapped_end): mapped for this buffer */  \
  VALUE(std::uint64_t, mapped_end, 0, hex)    /*   (address .. address + bytes when not fenced) */      \
  VALUE(std::uint64_t, guard_begin, 0, hex)   /* [guard_begin, guard_end): reserved, never mapped; */   \
  VALUE(std::uint64_t, guard_end, 0, hex)     /*   0, 0 when not fenced */                              \
  VALUE(std::uint64_t, stream, 0, hex)        /* stream-ordered allocations: the stream handle */       \
  VALUE(std::uint64_t, context, 0, hex)       /* the CUcontext current in the call, an id (0: none) */  \
  VALUE(std::int32_t, device, -1, dec)        /* that context's device ordinal (-1: none) */            \
  CODE(std::int32_t, failed_result, 0)        /* the CUresult of failed_call */                         \
  CODE(ring::Api, api, ring::Api::unknown)    /* the entry point that allocated */                      \
  CODE(ring::Api, free_api, ring::Api::unknown) /* the entry point that freed it (unknown while live) */ \
  CODE(ring::Side, side, ring::Side::none)    /* where its guard sits; none: not fenced */              \
  CODE(ring::State, state, ring::State::live) /* updated in place with one store */                     \
  CODE(ring::Unfenced, unfenced_reason, ring::Unfenced::none) /* side none: why not */                  \
  CODE(ring::VmmCall, failed_call, ring::VmmCall::none) /* vmm_failed: the call that failed */          \
  CODE(std::uint32_t, site, ring::kNoSite)    /* an index into the sites (kNoSite: none recorded) */    \
  VALUE(std::int32_t, origin_pid, 0, dec)     /* imported over CUDA IPC: the exporting process (0: none) */ \
  VALUE(std::uint64_t, origin_seq, 0, dec)    /*   and its allocation's record there (seq) */ \
  VALUE(std::uint64_t, guard_wanted, 0, dec)  /* fenced: the guard its size called for (guard_layout.h); */ \
                                              /*   more than guard_end - guard_begin: cut by the bounds */

#define CUDADIAG_RING_LAUNCH_FIELDS(VALUE, CODE)                                                          \
  VALUE(std::uint64_t, function, 0, hex)      /* the CUfunction handle */                               \
  VALUE(std::uint64_t, stream, 0, hex)        /* the CUstream handle (0: the legacy default stream) */  \
  VALUE(std::uint64_t, context, 0, hex)       /* the CUcontext current in the call, an id (0: none) */  \
  VALUE(ring::Dim3, grid, {}, dims)                                                                     \
  VALUE(ring::Dim3, block, {}, dims)                                                                    \
  VALUE(std::uint32_t, dynamic_smem, 0, dec)  /* bytes of dynamic shared memory */                      \
  VALUE(std::int32_t, device, -1, dec)        /* that context's device ordinal (-1: none) */            \
  CODE(ring::Api, api, ring::Api::unknown)    /* the entry point that launched */                       \
  CODE(std::uint8_t, returned, 0)             /* 1 once the driver's launch call returned */

#define CUDADIAG_RING_TMA_FIELDS(VALUE, CODE)                                                             \
  VALUE(std::uint64_t, address, 0, hex)       /* the tensor's base (globalAddress) */                   \
  VALUE(std::uint64_t, span_bytes, 0, dec)    /* bytes from the base its dims and strides cover (0: unknown) */ \
  VALUE(std::uint64_t, mapped_after, 0, dec)  /* fenced: bytes mapped from the base to the guard */     \
  VALUE(std::uint64_t, allocation_address, 0, hex) /* the allocation holding the base (0: none known) */ \
  VALUE(std::uint64_t, allocation_bytes, 0, dec)                                                        \
  VALUE(std::uint64_t, allocation_seq, 0, dec) /* its record's seq (AllocationSlot::seq) */             \
  CODE(ring::Api, api, ring::Api::unknown)    /* which encode */                                        \
  VALUE(std::uint8_t, data_type, 0, dec)      /* CUtensorMapDataType */                                 \
  VALUE(std::uint8_t, rank, 0, dec)                                                                     \
  VALUE(std::uint8_t, interleave, 0, dec)     /* CUtensorMapInterleave */                               \
  VALUE(std::uint8_t, swizzle, 0, dec)        /* CUtensorMapSwizzle */                                  \
  VALUE(std::uint8_t, oob_fill, 0, dec)       /* CUtensorMapFloatOOBfill */                             \
  CODE(std::uint8_t, flags, 0)                /* kTma* */                                               \
  VALUE(std::int32_t, result, 0, dec)         /* the encode's CUresult */

#define CUDADIAG_RING_SLACK_WRITE_FIELDS(VALUE, CODE)                                                     \
  VALUE(std::uint64_t, allocation_seq, 0, dec) /* the buffer's record (AllocationSlot::seq) */          \
  VALUE(std::uint64_t, address, 0, hex)       /* the buffer */                                          \
  VALUE(std::uint64_t, bytes, 0, dec)                                                                   \
  VALUE(std::uint32_t, first_offset, 0, dec)  /* the first changed byte past the end (0: the first byte after it) */ \
  VALUE(std::uint32_t, last_offset, 0, dec)   /* the last changed byte, likewise */                     \
  VALUE(std::uint32_t, slack_bytes, 0, dec)   /* bytes between the end and the guard */                 \
  VALUE(std::int32_t, pid, 0, dec)            /* the process that found them */                         \
  CODE(ring::SlackCheck, seen_at, ring::SlackCheck::free)

#define CUDADIAG_RING_IPC_FAILURE_FIELDS(VALUE, CODE)                                                    \
  VALUE(std::uint64_t, allocation_seq, 0, dec) /* the exporter's allocation record (AllocationSlot::seq) */ \
  VALUE(std::int32_t, pid, 0, dec)            /* the process where it failed */                         \
  VALUE(std::int32_t, peer_pid, 0, dec)       /* the other one (the exporter, for an import) */         \
  VALUE(std::int32_t, result, 0, dec)         /* the failing call's CUresult, or an errno */            \
  CODE(ring::IpcStep, step, ring::IpcStep::none)

// Who recorded into the ring (its owner), written once when the process claims it.
#define CUDADIAG_RING_IDENTITY_FIELDS(VALUE, CODE)                                                       \
  VALUE(std::int32_t, pid, 0, dec)                                                                      \
  VALUE(std::int32_t, rank, -1, dec)          /* the launcher's rank of the process (-1: none set) */   \
  VALUE(std::int32_t, local_rank, -1, dec)    /*   on its node (-1: none set) */                        \
  VALUE(std::int32_t, world_size, -1, dec)    /*   of how many (-1: none set) */                        \
  CODE(ring::LauncherVar, rank_from, ring::LauncherVar::none) /* the variables they were read from */   \
  CODE(ring::LauncherVar, local_rank_from, ring::LauncherVar::none)                                     \
  CODE(ring::LauncherVar, world_size_from, ring::LauncherVar::none)

// A device the owner used (a context current on it in an allocation or a launch), written
// the first time; its UUID and PCI bus id follow the list's fields in the slot.
#define CUDADIAG_RING_DEVICE_FIELDS(VALUE, CODE)                                                         \
  VALUE(std::int32_t, ordinal, -1, dec)       /* as the process sees it (after CUDA_VISIBLE_DEVICES) */ \
  VALUE(std::int32_t, uuid_result, -1, dec)   /* cuDeviceGetUuid's CUresult (-1: not called) */         \
  VALUE(std::int32_t, bus_id_result, -1, dec) /* cuDeviceGetPCIBusId's CUresult (-1: not called) */

// What to make of a list's field: a slot's member, an event's or record's member with its
// initial value, a copy between two structs named `to` and `from`, nothing.
#define CUDADIAG_RING_SLOT_MEMBER(type, name, ...) type name;
#define CUDADIAG_RING_MEMBER(type, name, initial, ...) type name = initial;
#define CUDADIAG_RING_COPY(type, name, ...) to.name = from.name;
#define CUDADIAG_RING_SKIP(...)

// One process event, written by whichever process of the run it happened in.
struct ProcessEvent {
  std::uint64_t stamp;        // complete_stamp(seq) once written
  std::uint64_t seq;
  std::int32_t pid;
  std::uint16_t kind;         // EventKind
  std::uint16_t reserved0;
  char program[kEventProgramBytes];  // the program (or library), NUL-terminated, cut to fit
};

// Bytes of a fenced buffer's slack that no longer hold kSlackCanary.
struct SlackWrite {
  std::uint64_t stamp;  // complete_stamp(seq) once written
  std::uint64_t seq;
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CUDADIAG_RING_SLOT_MEMBER, CUDADIAG_RING_SLOT_MEMBER)
  std::uint8_t reserved0[7];
};

// A CUDA IPC hand-over of fenced memory that failed.
struct IpcFailure {
  std::uint64_t stamp;  // complete_stamp(seq) once written
  std::uint64_t seq;
  CUDADIAG_RING_IPC_FAILURE_FIELDS(CUDADIAG_RING_SLOT_MEMBER, CUDADIAG_RING_SLOT_MEMBER)
  std::uint8_t reserved0[3];
};

// Who recorded into the ring: written once by its owner, when it claims the ring.
struct IdentitySlot {
  std::uint64_t stamp;  // complete_stamp(0) once written
  std::uint64_t seq;
  CUDADIAG_RING_IDENTITY_FIELDS(CUDADIAG_RING_SLOT_MEMBER, CUDADIAG_RING_SLOT_MEMBER)
  std::uint8_t reserved0[5];
  char exe[kExeBytes];  // /proc/self/exe, NUL-terminated, its last bytes when long
};

// A device the owner used.
struct DeviceSlot {
  std::uint64_t stamp;  // complete_stamp(seq) once written
  std::uint64_t seq;
  CUDADIAG_RING_DEVICE_FIELDS(CUDADIAG_RING_SLOT_MEMBER, CUDADIAG_RING_SLOT_MEMBER)
  std::uint32_t reserved0;
  std::uint8_t uuid[kUuidBytes];        // all zero when unknown
  char pci_bus_id[kBusIdBytes];         // NUL-terminated; empty when unknown
};

struct Header {
  std::uint64_t magic;  // kMagic, written last when the file is laid out
  std::uint32_t version;
  std::uint32_t header_bytes;
  std::uint32_t allocation_slot_bytes;
  std::uint32_t launch_slot_bytes;
  std::uint32_t allocation_capacity;
  std::uint32_t launch_capacity;
  std::uint64_t allocations_offset;
  std::uint64_t launches_offset;
  std::uint64_t names_offset;
  std::uint32_t names_capacity;
  std::uint32_t fence_align;            // bytes; alignment of fenced pointers
  std::uint64_t file_bytes;
  std::uint64_t quarantine_limit_bytes;
  std::uint64_t granularity;            // VMM granularity of the first fenced device (0: none yet)
  std::uint8_t fence_side;              // Side
  std::uint8_t guard_mode;              // fence::GuardMode (CUDADIAG_GUARD)
  std::uint8_t reserved0[2];
  std::int32_t owner_pid;               // the process recording here (0: none yet)
  std::uint32_t processes_loaded;       // processes whose interposer attached to this file
  std::uint32_t other_cuda_processes;   // later processes that used CUDA: in "<file>.<pid>"
  std::uint32_t cuda_seen;              // non-zero once a process resolved a driver entry point
  // The CUresult of the owner's wait for its context's work at the program's end (after
  // main returned, or at exit()) when that wait failed; 0: it did not fail, or never ran.
  std::int32_t end_wait_result;
  // Counters of the owner process.
  std::uint64_t allocations;            // allocations made (successful calls); next allocation seq
  std::uint64_t fenced;                 // of which placed against a guard
  std::uint64_t frees;                  // free calls seen
  std::uint64_t launches;               // launches seen; next launch seq
  std::uint64_t quarantined_bytes;      // address space reserved for freed buffers now
  std::uint64_t tma_encodes;            // cuTensorMapEncode* calls
  std::uint64_t dropped_allocations;    // allocation records overwritten or never written
  std::uint64_t names_used;             // bytes of the names region in use
  // TMA descriptors; what the fence cost.
  std::uint32_t tma_capacity;           // TmaSlot records
  std::uint32_t reserved2;
  std::uint64_t tma_offset;
  std::uint64_t tma_near_guard;         // encodes whose base lies less than kTmaOutOfBoundsReach before a guard
  std::uint64_t handles_reused;         // fenced allocations given physical memory a freed buffer had
  std::uint64_t reservations_reused;    // fenced allocations placed in an address range that left quarantine
  std::uint64_t driver_calls[kDriverCallKinds];  // the interposer's own driver calls, by DriverCall
  std::uint64_t driver_ns[kDriverCallKinds];     // nanoseconds spent in them
  // The file itself; the processes of the run.
  std::uint32_t ring_flags;             // kRing*
  std::int32_t layout_errno;            // kRingNoRoom: the errno of the reservation
  std::uint64_t wanted_bytes;           // kRingNoRoom: the bytes the records needed
  std::uint32_t process_events;         // events recorded (next event seq); past kMaxProcessEvents counted only
  std::uint32_t preloads_restored;      // events of kind preload_restored
  std::uint32_t escapes;                // events for which event_escapes()
  std::uint32_t reserved3;
  ProcessEvent events[kMaxProcessEvents];
  // Writes into the slack of fenced buffers (filled with kSlackCanary when placed, checked at free and exit).
  std::uint64_t slack_watched;          // fenced buffers whose slack holds canaries
  std::uint64_t slack_writes;           // slack writes found (next SlackWrite seq); past kMaxSlackWrites counted only
  SlackWrite slack[kMaxSlackWrites];
  // Freed memory kept mapped for recycling (CUDADIAG_FENCE_RECYCLE_MB).
  std::uint64_t recycle_limit_bytes;    // freed buffers kept mapped for the next of their size, up to this (0: none)
  std::uint64_t recycled;               // fenced allocations given a freed buffer's mapping (no driver call)
  std::uint64_t recycled_bytes;         // mapped bytes kept for recycling now
  // Allocation sites and the loaded objects their return addresses lie in.
  std::uint32_t site_capacity;          // SiteSlot records
  std::uint32_t module_capacity;        // ModuleSlot records
  std::uint64_t sites_offset;
  std::uint64_t modules_offset;
  std::uint64_t sites;                  // sites recorded (next site index); at most site_capacity
  std::uint64_t sites_dropped;          // allocations whose site found the table full
  std::uint64_t modules;                // modules recorded (next module index); at most module_capacity
  std::uint64_t modules_dropped;        // modules that found the table full
  std::uint32_t stack_flags;            // kStacks*
  std::uint32_t reserved4;
  // CUDA IPC and the mappings the program makes itself: recorded, not fenced.
  std::uint64_t ipc_exports;            // fenced buffers handed out (cuIpcGetMemHandle, cuMemRetainAllocationHandle)
  std::uint64_t ipc_imports;            // another process's fenced buffers mapped here with guards
  std::uint64_t program_mappings;       // cuMemMap calls of the program
  std::uint64_t ipc_failures;           // hand-overs that failed (next IpcFailure seq); past kMaxIpcFailures counted only
  IpcFailure ipc_failure[kMaxIpcFailures];
  // How far past its end (before its start) each fenced buffer is watched: its guard.
  std::uint64_t guard_limit_bytes;      // the most one buffer's guard may have (fence::kMaxGuardBytes)
  std::uint64_t guard_total_limit_bytes;  // the most all guards held at once may have
  std::uint64_t guards_cut;             // fenced allocations given a smaller guard than the per-buffer bound
                                        //   allows (the bound on all guards reached, or their reservation refused)
  // Who the owner is, and the devices it used.
  IdentitySlot identity;
  std::uint32_t devices;                // devices recorded (next DeviceSlot seq); past kMaxDevices counted only
  std::uint32_t reserved5;
  DeviceSlot device[kMaxDevices];
};

struct AllocationSlot {
  std::uint64_t stamp;
  std::uint64_t seq;
  CUDADIAG_RING_ALLOCATION_FIELDS(CUDADIAG_RING_SLOT_MEMBER, CUDADIAG_RING_SLOT_MEMBER)
  std::uint64_t reserved[1];
};

// A Python frame of an allocation site.
struct PythonFrame {
  std::int32_t line;                          // the line being run (0: unknown)
  std::uint8_t flags;                         // kPython*
  char function[kPythonFunctionBytes];        // co_name, NUL-terminated, cut to fit
  char file[kPythonFileBytes];                // co_filename's last bytes, NUL-terminated
};

// Where allocations were made: one record per distinct site.
struct SiteSlot {
  std::uint64_t stamp;
  std::uint64_t seq;                  // the site's index
  std::uint64_t hash;                 // of the frames and the Python frames
  std::uint32_t frame_count;          // return addresses in `frames`, innermost first
  std::uint32_t python_count;         // Python frames, innermost first
  std::uint64_t frames[kSiteFrames];  // return addresses (the interposer's own frames left out)
  PythonFrame python[kPythonFrames];
  std::uint8_t python_state;          // PythonState
  std::uint8_t reserved0[7];
  std::uint64_t reserved[1];
};

// A loaded object of the process (the program, a shared library): return addresses in
// [begin, end) belong to it, at `address - bias` in its file.
struct ModuleSlot {
  std::uint64_t stamp;
  std::uint64_t seq;
  std::uint64_t begin;
  std::uint64_t end;
  std::uint64_t bias;
  char path[kModulePathBytes];  // the file, NUL-terminated; empty when it did not fit
};

struct LaunchSlot {
  std::uint64_t stamp;
  std::uint64_t seq;
  CUDADIAG_RING_LAUNCH_FIELDS(CUDADIAG_RING_SLOT_MEMBER, CUDADIAG_RING_SLOT_MEMBER)
  std::uint8_t pointer_count;
  std::uint32_t name_offset;  // into the names region; kNoName: see name_prefix
  std::uint32_t name_length;
  std::uint32_t reserved0;
  std::uint64_t pointer_args[kMaxPointerArgs];  // those pointing into known allocations
  char name_prefix[kNamePrefixBytes];           // the name's first bytes, NUL-terminated
  std::uint64_t reserved1;
};

// An encoded TMA descriptor, recorded after the driver's encode answered.
struct TmaSlot {
  std::uint64_t stamp;
  std::uint64_t seq;
  CUDADIAG_RING_TMA_FIELDS(CUDADIAG_RING_SLOT_MEMBER, CUDADIAG_RING_SLOT_MEMBER)
  std::uint32_t reserved0;
  std::uint64_t reserved1[2];
};

// TMA's out-of-bounds handling in its 128 KiB address mode may touch up to this many
// bytes from a tensor map's base, whatever the tensor's extent: a guard closer than this
// to the base can fault correct code.
inline constexpr std::uint64_t kTmaOutOfBoundsReach = 128u << 10;

static_assert(sizeof(Header) <= kHeaderBytes);
static_assert(sizeof(ProcessEvent) == 128);
static_assert(sizeof(SlackWrite) == 64);
static_assert(sizeof(IpcFailure) == 40);
static_assert(sizeof(IdentitySlot) == 296);
static_assert(sizeof(DeviceSlot) == 64);
static_assert(sizeof(Header) ==
              216 + 16 * kDriverCallKinds + 32 + kMaxProcessEvents * sizeof(ProcessEvent) + 16 + kMaxSlackWrites * 64 +
                  24 + 64 + 32 + kMaxIpcFailures * sizeof(IpcFailure) + 24 + sizeof(IdentitySlot) + 8 +
                  kMaxDevices * sizeof(DeviceSlot));
static_assert(offsetof(Header, allocations) == 112);
static_assert(offsetof(Header, tma_capacity) == 176);
// tests/fuzz/seeds/ring_reader/slack.ring holds a slack write at these offsets.
static_assert(offsetof(Header, slack_writes) == 2464 && offsetof(Header, slack) == 2472);
static_assert(sizeof(AllocationSlot) == 128);
static_assert(sizeof(LaunchSlot) == 256);
static_assert(offsetof(LaunchSlot, pointer_args) == 88);
static_assert(sizeof(TmaSlot) == 96);
static_assert(sizeof(PythonFrame) == 128);
static_assert(sizeof(SiteSlot) == 496);
static_assert(sizeof(ModuleSlot) == 256);
static_assert(offsetof(AllocationSlot, context) == 72 && offsetof(AllocationSlot, site) == 96);
static_assert(offsetof(AllocationSlot, origin_pid) == 100 && offsetof(AllocationSlot, origin_seq) == 104);
static_assert(offsetof(AllocationSlot, guard_wanted) == 112);
static_assert(offsetof(LaunchSlot, context) == 32 && offsetof(LaunchSlot, device) == 68);
static_assert(offsetof(SlackWrite, pid) == 52);
// No padding: every byte of a slot is a field the writer sets (the reader's view is the writer's).
static_assert(std::has_unique_object_representations_v<AllocationSlot> &&
              std::has_unique_object_representations_v<LaunchSlot> &&
              std::has_unique_object_representations_v<TmaSlot> &&
              std::has_unique_object_representations_v<SlackWrite> &&
              std::has_unique_object_representations_v<IpcFailure> &&
              std::has_unique_object_representations_v<IdentitySlot> &&
              std::has_unique_object_representations_v<DeviceSlot>);

constexpr std::uint64_t complete_stamp(std::uint64_t seq) { return 2 * seq + 2; }
constexpr std::uint64_t writing_stamp(std::uint64_t seq) { return 2 * seq + 1; }

// Offsets of a file with these capacities (the writer lays it out, the reader checks it).
struct Layout {
  std::uint64_t allocations_offset;
  std::uint64_t launches_offset;
  std::uint64_t tma_offset;
  std::uint64_t names_offset;
  std::uint64_t sites_offset;
  std::uint64_t modules_offset;
  std::uint64_t file_bytes;
};

// Record counts of a ring: what the writer lays out, what a header declares.
struct Capacities {
  std::uint32_t allocations = 0;
  std::uint32_t launches = 0;
  std::uint32_t tma_maps = 0;
  std::uint32_t name_bytes = 0;
  std::uint32_t sites = 0;
  std::uint32_t modules = 0;
};
inline constexpr Capacities kDefaultCapacities{kDefaultAllocationSlots, kDefaultLaunchSlots, kDefaultTmaSlots,
                                               kDefaultNameBytes,       kDefaultSiteSlots,   kDefaultModuleSlots};

constexpr Layout layout_for(const Capacities& c) {
  Layout l{};
  l.allocations_offset = kHeaderBytes;
  l.launches_offset = l.allocations_offset + std::uint64_t{c.allocations} * sizeof(AllocationSlot);
  l.tma_offset = l.launches_offset + std::uint64_t{c.launches} * sizeof(LaunchSlot);
  l.names_offset = l.tma_offset + std::uint64_t{c.tma_maps} * sizeof(TmaSlot);
  l.sites_offset = (l.names_offset + c.name_bytes + 7) / 8 * 8;
  l.modules_offset = l.sites_offset + std::uint64_t{c.sites} * sizeof(SiteSlot);
  l.file_bytes = l.modules_offset + std::uint64_t{c.modules} * sizeof(ModuleSlot);
  return l;
}

// The capacities a header declares.
constexpr Capacities capacities_of(const Header& h) {
  return Capacities{h.allocation_capacity, h.launch_capacity, h.tma_capacity,
                    h.names_capacity,      h.site_capacity,   h.module_capacity};
}

}  // namespace cudadiag::ring

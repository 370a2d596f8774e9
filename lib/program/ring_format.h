#pragma once
// The file the interposer (kernels/interposer, loaded into the user's program) records
// into and the parent reads back (lib/program/ring_reader.h) after the program ended,
// however it ended. Plain structs and code tables, no dependencies: the writer is a
// preloaded library without the C++ library, the reader a host tool.
//
// File layout (host byte order; written and read on the same machine):
//
//   [0, kHeaderBytes)                          Header
//   [allocations_offset, + capacity * 128)     AllocationSlot: live allocations are kept;
//                                              freed ones are overwritten oldest first
//   [launches_offset, + capacity * 256)        LaunchSlot: a ring of the latest launches
//   [names_offset, + names_capacity)           kernel names, each followed by a NUL
//
// A slot is complete when its stamp is 2 * seq + 2; the writer sets 2 * seq + 1 before it
// writes the fields, so a record that was being written when the process died is told
// apart ("torn") and dropped. Counters are per process and kept when the rings wrap.
#include <cstddef>
#include <cstdint>

namespace cudadiag::ring {

inline constexpr std::uint64_t kMagic = 0x00474e4952464443ull;  // "CDFRING\0"
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint32_t kHeaderBytes = 4096;
inline constexpr std::uint32_t kMaxPointerArgs = 8;
inline constexpr std::uint32_t kNamePrefixBytes = 96;
inline constexpr std::uint32_t kNoName = 0xffffffffu;

// Default and largest record counts (CUDADIAG_RING_ALLOCATIONS, CUDADIAG_RING_LAUNCHES,
// CUDADIAG_RING_NAMES_KB).
inline constexpr std::uint32_t kDefaultAllocationSlots = 16384;
inline constexpr std::uint32_t kDefaultLaunchSlots = 4096;
inline constexpr std::uint32_t kDefaultNameBytes = 1u << 20;
inline constexpr std::uint32_t kMaxSlots = 1u << 22;
inline constexpr std::uint32_t kMaxNameBytes = 64u << 20;

// Where the guard of a fenced allocation sits; `none`: not fenced.
enum class Side : std::uint8_t { back = 0, front = 1, none = 2 };

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
    case Api::unknown:
    case Api::count: break;
  }
  return "unknown";
}

// Why an allocation was not fenced (slot field `unfenced_reason`).
enum class Unfenced : std::uint8_t {
  fenced = 0,
  fence_off,         // CUDADIAG_FENCE_SIDE=none: recorded only
  managed_memory,
  host_memory,
  no_context,        // no current context: the driver's own allocator answered
  stream_capture,    // a stream-ordered allocation during graph capture
  custom_pool,       // a memory pool other than the device's default one
  foreign_stream,    // the stream belongs to another context
  vmm_failed,        // a VMM call failed (failed_call, failed_result say which and how)
  zero_bytes,        // a zero-byte request the driver answered itself
  count,
};

constexpr const char* unfenced_text(Unfenced u) {
  switch (u) {
    case Unfenced::fenced: return "";
    case Unfenced::fence_off: return "fence off (CUDADIAG_FENCE_SIDE=none)";
    case Unfenced::managed_memory: return "managed memory";
    case Unfenced::host_memory: return "host memory";
    case Unfenced::no_context: return "no current context";
    case Unfenced::stream_capture: return "stream capture in progress";
    case Unfenced::custom_pool: return "memory pool other than the device's default";
    case Unfenced::foreign_stream: return "stream of another context";
    case Unfenced::vmm_failed: return "VMM failed";
    case Unfenced::zero_bytes: return "zero bytes";
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
  freed_unguarded = 3,   // freed but left mapped (freed during graph capture) or unfenced
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
  std::uint8_t reserved0[3];
  std::int32_t owner_pid;               // the process recording here (0: none yet)
  std::uint32_t processes_loaded;       // processes whose interposer attached to this file
  std::uint32_t other_cuda_processes;   // later processes that used CUDA: in "<file>.<pid>"
  std::uint32_t cuda_seen;              // non-zero once a process resolved a driver entry point
  std::uint32_t reserved1;
  // Counters of the owner process.
  std::uint64_t allocations;            // allocations made (successful calls); next allocation seq
  std::uint64_t fenced;                 // of which placed against a guard
  std::uint64_t frees;                  // free calls seen
  std::uint64_t launches;               // launches seen; next launch seq
  std::uint64_t quarantined_bytes;      // address space reserved for freed buffers now
  std::uint64_t tma_encodes;            // cuTensorMapEncode* calls
  std::uint64_t dropped_allocations;    // allocation records overwritten or never written
  std::uint64_t names_used;             // bytes of the names region in use
};

struct AllocationSlot {
  std::uint64_t stamp;
  std::uint64_t seq;
  std::uint64_t address;
  std::uint64_t bytes;
  std::uint64_t mapped_begin;
  std::uint64_t mapped_end;
  std::uint64_t guard_begin;
  std::uint64_t guard_end;
  std::uint64_t stream;       // stream-ordered allocations: the stream handle
  std::uint16_t api;          // Api
  std::uint16_t free_api;     // Api of the free (0 while live)
  std::uint8_t side;          // Side
  std::uint8_t state;         // State
  std::uint8_t unfenced_reason;  // Unfenced
  std::uint8_t failed_call;   // VmmCall
  std::int32_t failed_result; // CUresult of failed_call
  std::int32_t device;        // device ordinal (-1: unknown)
  std::uint64_t reserved[5];
};

struct LaunchSlot {
  std::uint64_t stamp;
  std::uint64_t seq;
  std::uint64_t function;     // CUfunction handle
  std::uint64_t stream;       // CUstream handle
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint32_t dynamic_smem;
  std::uint16_t api;          // Api
  std::uint8_t pointer_count;
  std::uint8_t reserved0;
  std::uint32_t name_offset;  // into the names region; kNoName: see name_prefix
  std::uint32_t name_length;
  std::uint64_t pointer_args[kMaxPointerArgs];
  char name_prefix[kNamePrefixBytes];  // the name's first bytes, NUL-terminated
  std::uint64_t reserved1[3];
};

static_assert(sizeof(Header) <= kHeaderBytes);
static_assert(sizeof(Header) == 176);
static_assert(offsetof(Header, allocations) == 112);
static_assert(sizeof(AllocationSlot) == 128);
static_assert(sizeof(LaunchSlot) == 256);
static_assert(offsetof(LaunchSlot, pointer_args) == 72);

constexpr std::uint64_t complete_stamp(std::uint64_t seq) { return 2 * seq + 2; }
constexpr std::uint64_t writing_stamp(std::uint64_t seq) { return 2 * seq + 1; }

// Offsets of a file with these capacities (the writer lays it out, the reader checks it).
struct Layout {
  std::uint64_t allocations_offset;
  std::uint64_t launches_offset;
  std::uint64_t names_offset;
  std::uint64_t file_bytes;
};

constexpr Layout layout_for(std::uint32_t allocation_capacity, std::uint32_t launch_capacity,
                            std::uint32_t names_capacity) {
  Layout l{};
  l.allocations_offset = kHeaderBytes;
  l.launches_offset = l.allocations_offset + std::uint64_t{allocation_capacity} * sizeof(AllocationSlot);
  l.names_offset = l.launches_offset + std::uint64_t{launch_capacity} * sizeof(LaunchSlot);
  l.file_bytes = l.names_offset + names_capacity;
  return l;
}

}  // namespace cudadiag::ring

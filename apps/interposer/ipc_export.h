#pragma once
// The exporting side of CUDA IPC under the fence. Fenced memory is made exportable as a
// POSIX file descriptor where the device can (exportable_memory.h); a fenced buffer
// the program hands out (cuIpcGetMemHandle, cuMemRetainAllocationHandle) is kept in a
// table so that its memory never serves another buffer once freed (another process may
// still map it), and a legacy handle of the interposer's own (ipc_handle.h) names it;
// the process's hand-over socket (ipc_server.h) answers an importer's request for it with
// the memory's file descriptor.
#include <cuda.h>

#include <cstdint>

#include "apps/interposer/driver_calls.h"
#include "apps/interposer/ipc_handle.h"
#include "apps/interposer/tracked_ranges.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

// Keeps the fenced buffer `t` as exported (once): its memory is released, never reused,
// when it is freed. False when the table cannot grow.
bool mark_exported(const Tracked& t) noexcept;

// A handle of the interposer's own for the fenced buffer `t` (marked exported), once its
// memory is exported as a file descriptor (kept until the buffer is freed) and the
// hand-over socket runs; else false, the step that failed and its result (a CUresult or
// an errno) recorded in the ring.
bool make_ipc_handle(const Tracked& t, CUipcMemHandle& out) noexcept;

// The buffer at `address` is being freed: true when it had been exported (its memory must
// not serve another buffer). The hand-over socket no longer gives it out.
bool forget_export(std::uint64_t address) noexcept;

// When `handle` (a CUmemGenericAllocationHandle) is an exported fenced buffer's memory:
// true, with its record's seq.
bool exported_memory(std::uint64_t handle, std::uint64_t& seq) noexcept;

// The exporter's answer to an importer's request (called by the hand-over socket's
// thread; no driver call): a duplicate of the file descriptor of the buffer the request
// names (the caller sends and closes it), or -1 with the reason in reply.status.
int answer_ipc_request(const IpcRequest& request, IpcReply& reply, std::int32_t peer_pid) noexcept;

// Records a failed hand-over in this process's ring.
void record_ipc_failure(ring::IpcStep step, std::int32_t result, std::uint64_t allocation_seq,
                        std::int32_t peer_pid) noexcept;

}  // namespace cudadiag::interposer

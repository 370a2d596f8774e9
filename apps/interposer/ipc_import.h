#pragma once
// The importing side of CUDA IPC under the fence: a handle of the interposer's own
// (ipc_handle.h) is opened by fetching the buffer's memory from the exporting process's
// hand-over socket (ipc_server.h), importing it (cuMemImportFromShareableHandle) and
// mapping it in an address range of this process's own, flush against a guard on the
// side the exporter's sits, with access for the current context's device. The import is
// tracked and recorded in this process's ring with the exporter's pid and allocation
// record, so that the parent names the exporter's allocation when a fault hits it here.
#include <cuda.h>

#include "apps/interposer/ipc_handle.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

// The buffer's address in this process. Opened again, the same address (one reference
// more), as the driver answers. A failure is recorded and returned as the error of the
// step that failed (CUDA_ERROR_INVALID_VALUE when the exporter could not be reached or no
// longer has the buffer, CUDA_ERROR_INVALID_CONTEXT without a current context).
CUresult open_fenced_import(const FencedIpcHandle& h, ring::Api api, CUdeviceptr* out) noexcept;

// Closes an import open_fenced_import made (once its last reference goes: waits for the
// context's work, unmaps, frees the range); false when `address` is none of them.
bool close_fenced_import(CUdeviceptr address, CUresult& rc) noexcept;

}  // namespace cudadiag::interposer

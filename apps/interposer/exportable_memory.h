#pragma once
// Fenced memory is made exportable as cudaMalloc's memory is, so that the program can
// hand a fenced buffer to another process (CUDA IPC: ipc_export.h): a POSIX file
// descriptor is requested where the device supports one.
#include <cuda.h>

#include "apps/interposer/driver_calls.h"

namespace cudadiag::interposer {

// The shareable handle type fenced memory is made with on `device`: a POSIX file
// descriptor where CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED says
// so (asked once per device), else none (the buffer then cannot be handed out).
CUmemAllocationHandleType exportable_handle_type(const DriverCalls& d, int device) noexcept;

}  // namespace cudadiag::interposer

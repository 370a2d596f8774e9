#pragma once
// The driver functions the interposer calls itself (the VMM calls that place a buffer
// against a guard, context and stream queries, kernel names and parameter layouts),
// taken from the driver's cuGetProcAddress at fixed ABI versions so that a newer driver
// never hands out a variant with another signature (CUDA 13's cuCtxGetDevice takes a
// context). A function the driver lacks stays null.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>

namespace cudadiag::interposer {

struct DriverCalls {
  PFN_cuCtxGetDevice_v2000 ctx_get_device = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuCtxSynchronize_v2000 ctx_synchronize = nullptr;
  // A free waits on the context that owns the buffer, which another may be current then.
  PFN_cuCtxPushCurrent_v4000 ctx_push_current = nullptr;
  PFN_cuCtxPopCurrent_v4000 ctx_pop_current = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_synchronize = nullptr;
  PFN_cuStreamSynchronize_v7000_ptsz stream_synchronize_ptsz = nullptr;
  PFN_cuStreamIsCapturing_v10000 stream_is_capturing = nullptr;
  PFN_cuStreamIsCapturing_v10000_ptsz stream_is_capturing_ptsz = nullptr;
  PFN_cuStreamGetCtx_v9020 stream_get_ctx = nullptr;
  PFN_cuStreamGetCtx_v9020_ptsz stream_get_ctx_ptsz = nullptr;
  PFN_cuDeviceGetCount_v2000 device_get_count = nullptr;
  PFN_cuDeviceCanAccessPeer_v4000 device_can_access_peer = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuDeviceGetUuid_v11040 device_get_uuid = nullptr;            // a device's record (device_record.h)
  PFN_cuDeviceGetPCIBusId_v4010 device_get_pci_bus_id = nullptr;
  PFN_cuDeviceGetDefaultMemPool_v11020 device_get_default_mem_pool = nullptr;
  PFN_cuDeviceGetMemPool_v11020 device_get_mem_pool = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 mem_get_allocation_granularity = nullptr;
  PFN_cuMemAddressReserve_v10020 mem_address_reserve = nullptr;
  PFN_cuMemAddressFree_v10020 mem_address_free = nullptr;
  PFN_cuMemCreate_v10020 mem_create = nullptr;
  PFN_cuMemRelease_v10020 mem_release = nullptr;
  PFN_cuMemMap_v10020 mem_map = nullptr;
  PFN_cuMemUnmap_v10020 mem_unmap = nullptr;
  PFN_cuMemSetAccess_v10020 mem_set_access = nullptr;
  PFN_cuFuncGetName_v12030 func_get_name = nullptr;
  PFN_cuFuncGetParamInfo_v12040 func_get_param_info = nullptr;
  PFN_cuKernelGetName_v12030 kernel_get_name = nullptr;
  PFN_cuKernelGetParamInfo_v12040 kernel_get_param_info = nullptr;
  PFN_cuMemsetD8_v3020 memset_d8 = nullptr;        // canaries in a fenced buffer's slack
  PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;    // ... read back to check them
  // CUDA IPC of fenced memory (ipc_export.h, ipc_import.h).
  PFN_cuMemExportToShareableHandle_v10020 mem_export_to_shareable_handle = nullptr;
  PFN_cuMemImportFromShareableHandle_v10020 mem_import_from_shareable_handle = nullptr;
  PFN_cuMemGetAddressRange_v3020 mem_get_address_range = nullptr;

  // Everything a fenced allocation needs.
  bool can_fence() const noexcept {
    return ctx_get_device && ctx_synchronize && mem_get_allocation_granularity && mem_address_reserve &&
           mem_address_free && mem_create && mem_release && mem_map && mem_unmap && mem_set_access;
  }
};

// Null until the driver's cuGetProcAddress is reachable; resolved once after that.
const DriverCalls* driver_calls() noexcept;

// Where a call of the program ran: the calling thread's current context (an opaque id,
// 0: none) and its device ordinal (-1: none, or no driver yet).
struct CallPlace {
  std::uint64_t context = 0;
  int device = -1;
};
CallPlace current_place() noexcept;

// The device of `context` (made current on this thread for the question, then popped); -1
// when it cannot be told.
int device_of_context(const DriverCalls& d, CUcontext context) noexcept;

// Waits for the work queued in `context` (0: the calling thread's current one), as a free
// of memory that context owns must: when another context is current on this thread, the
// owner is pushed for the synchronize and popped after. CUDA_SUCCESS when there is no
// context to wait for (VMM memory belongs to none; a context already destroyed has no work).
CUresult synchronize_context(const DriverCalls& d, std::uint64_t context) noexcept;

}  // namespace cudadiag::interposer

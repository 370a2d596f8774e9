// The exported CUDA IPC and VMM mapping entry points. A fenced buffer is handed out with
// a handle of the interposer's own (the driver's legacy IPC does not take VMM memory),
// and such a handle is opened by the interposer (ipc_export.h, ipc_import.h); every
// other pointer and handle goes to the driver unchanged. Mappings the program makes
// itself, and imports the driver made, are recorded (mapped_memory.h).
#include <cudaTypedefs.h>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/entry_points.h"
#include "apps/interposer/exported_hooks.h"
#include "apps/interposer/ipc_export.h"
#include "apps/interposer/ipc_import.h"
#include "apps/interposer/mapped_memory.h"
#include "apps/interposer/process.h"
#include "apps/interposer/tracked_ranges.h"

using namespace cudadiag::interposer;
namespace ring = cudadiag::ring;

namespace {

CUresult no_driver() noexcept { return CUDA_ERROR_NOT_INITIALIZED; }

// The live fenced buffer holding `address`.
bool fenced_buffer(std::uint64_t address, Tracked& t) {
  return tracked_ranges().containing(address, t) && t.kind == Tracked::Kind::fenced;
}

// An import the driver made: its size from the driver, recorded.
void note_driver_import(ring::Api api, CUdeviceptr address) {
  const DriverCalls* d = driver_calls();
  CUdeviceptr base = 0;
  size_t bytes = 0;
  if (!d || !d->mem_get_address_range || d->mem_get_address_range(&base, &bytes, address) != CUDA_SUCCESS ||
      base != address)
    bytes = 0;
  note_mapping(api, ring::Unfenced::ipc_imported, address, bytes);
}

CUresult open_handle(ring::Api api, Entry e, CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int flags) {
  note_cuda_seen();
  FencedIpcHandle ours;
  if (fenced_handle_of(handle, ours)) return open_fenced_import(ours, api, pdptr);
  auto real = real_fn<PFN_cuIpcOpenMemHandle_v11000>(e);
  if (!real) return no_driver();
  const CUresult rc = real(pdptr, handle, flags);
  if (rc == CUDA_SUCCESS && pdptr && *pdptr) note_driver_import(api, *pdptr);
  return rc;
}

}  // namespace

CUresult hook_cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuIpcGetMemHandle_v4010>(Entry::ipc_get_mem_handle);
  if (!real) return no_driver();
  Tracked t;
  if (pHandle && fenced_buffer(dptr, t)) {
    if (make_ipc_handle(t, *pHandle)) return CUDA_SUCCESS;
    // Recorded: the driver's own answer for VMM memory follows.
    debug_log("cuIpcGetMemHandle(%#llx): the fenced buffer cannot be handed out; the driver answers",
              static_cast<unsigned long long>(dptr));
  }
  return real(pHandle, dptr);
}

CUresult hook_cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return open_handle(ring::Api::cuIpcOpenMemHandle_v1, Entry::ipc_open_mem_handle, pdptr, handle, Flags);
}

CUresult hook_cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return open_handle(ring::Api::cuIpcOpenMemHandle_v2, Entry::ipc_open_mem_handle_v2, pdptr, handle, Flags);
}

CUresult hook_cuIpcCloseMemHandle(CUdeviceptr dptr) {
  note_cuda_seen();
  CUresult rc = CUDA_SUCCESS;
  if (close_fenced_import(dptr, rc)) return rc;
  auto real = real_fn<PFN_cuIpcCloseMemHandle_v4010>(Entry::ipc_close_mem_handle);
  if (!real) return no_driver();
  rc = real(dptr);
  if (rc == CUDA_SUCCESS) note_unmapping(ring::Api::cuIpcCloseMemHandle, dptr, 1);
  return rc;
}

CUresult hook_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuMemRetainAllocationHandle_v11000>(Entry::mem_retain_allocation_handle);
  if (!real) return no_driver();
  const CUresult rc = real(handle, addr);
  // The program holds the fenced buffer's memory now, and may hand it out: once the
  // buffer is freed, its memory must not serve another one.
  Tracked t;
  if (rc == CUDA_SUCCESS && fenced_buffer(reinterpret_cast<std::uint64_t>(addr), t)) mark_exported(t);
  return rc;
}

CUresult hook_cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                           CUmemAllocationHandleType handleType, unsigned long long flags) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuMemExportToShareableHandle_v10020>(Entry::mem_export_to_shareable_handle);
  if (!real) return no_driver();
  const CUresult rc = real(shareableHandle, handle, handleType, flags);
  std::uint64_t seq = 0;
  if (rc != CUDA_SUCCESS && exported_memory(handle, seq))
    record_ipc_failure(ring::IpcStep::export_fd, static_cast<std::int32_t>(rc), seq, 0);
  return rc;
}

CUresult hook_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                       unsigned long long flags) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuMemMap_v10020>(Entry::mem_map);
  if (!real) return no_driver();
  const CUresult rc = real(ptr, size, offset, handle, flags);
  if (rc == CUDA_SUCCESS) note_mapping(ring::Api::cuMemMap, ring::Unfenced::program_mapped, ptr, size);
  return rc;
}

CUresult hook_cuMemUnmap(CUdeviceptr ptr, size_t size) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuMemUnmap_v10020>(Entry::mem_unmap);
  if (!real) return no_driver();
  const CUresult rc = real(ptr, size);
  if (rc == CUDA_SUCCESS) note_unmapping(ring::Api::cuMemUnmap, ptr, size);
  return rc;
}

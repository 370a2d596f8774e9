#include "apps/interposer/driver_calls.h"

#include <pthread.h>

#include <atomic>

#include "apps/interposer/libcuda.h"
#include "apps/interposer/timed_call.h"

namespace cudadiag::interposer {
namespace {

// Newest ABI these calls are written against: functions whose signature changed later
// (cuCtxGetDevice and cuCtxSynchronize in 13.0, cuStreamGetCtx in 12.5) come as declared above.
constexpr int kAbiVersion = 12040;

DriverCalls g_calls;
std::atomic<bool> g_resolved{false};
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

template <class Fn>
void take(Fn& slot, const char* name, bool per_thread = false) {
  void* p = nullptr;
  const cuuint64_t flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  if (real_get_proc_address(name, &p, kAbiVersion, flags) != CUDA_SUCCESS) p = nullptr;
  slot = reinterpret_cast<Fn>(p);
}

// False when no driver is reachable yet (nothing is kept then).
bool resolve(DriverCalls& c) {
  void* probe = nullptr;
  if (real_get_proc_address("cuCtxGetDevice", &probe, kAbiVersion, CU_GET_PROC_ADDRESS_LEGACY_STREAM) !=
          CUDA_SUCCESS ||
      !probe)
    return false;
  take(c.ctx_get_device, "cuCtxGetDevice");
  take(c.ctx_get_current, "cuCtxGetCurrent");
  take(c.ctx_synchronize, "cuCtxSynchronize");
  take(c.ctx_push_current, "cuCtxPushCurrent");
  take(c.ctx_pop_current, "cuCtxPopCurrent");
  take(c.stream_synchronize, "cuStreamSynchronize");
  take(c.stream_synchronize_ptsz, "cuStreamSynchronize", true);
  take(c.stream_is_capturing, "cuStreamIsCapturing");
  take(c.stream_is_capturing_ptsz, "cuStreamIsCapturing", true);
  take(c.stream_get_ctx, "cuStreamGetCtx");
  take(c.stream_get_ctx_ptsz, "cuStreamGetCtx", true);
  take(c.device_get_count, "cuDeviceGetCount");
  take(c.device_can_access_peer, "cuDeviceCanAccessPeer");
  take(c.device_get_attribute, "cuDeviceGetAttribute");
  take(c.device_get_uuid, "cuDeviceGetUuid");
  take(c.device_get_pci_bus_id, "cuDeviceGetPCIBusId");
  take(c.device_get_default_mem_pool, "cuDeviceGetDefaultMemPool");
  take(c.device_get_mem_pool, "cuDeviceGetMemPool");
  take(c.mem_get_allocation_granularity, "cuMemGetAllocationGranularity");
  take(c.mem_address_reserve, "cuMemAddressReserve");
  take(c.mem_address_free, "cuMemAddressFree");
  take(c.mem_create, "cuMemCreate");
  take(c.mem_release, "cuMemRelease");
  take(c.mem_map, "cuMemMap");
  take(c.mem_unmap, "cuMemUnmap");
  take(c.mem_set_access, "cuMemSetAccess");
  take(c.func_get_name, "cuFuncGetName");
  take(c.func_get_param_info, "cuFuncGetParamInfo");
  take(c.kernel_get_name, "cuKernelGetName");
  take(c.kernel_get_param_info, "cuKernelGetParamInfo");
  take(c.memset_d8, "cuMemsetD8");
  take(c.memcpy_dtoh, "cuMemcpyDtoH");
  take(c.mem_export_to_shareable_handle, "cuMemExportToShareableHandle");
  take(c.mem_import_from_shareable_handle, "cuMemImportFromShareableHandle");
  take(c.mem_get_address_range, "cuMemGetAddressRange");
  return true;
}

}  // namespace

const DriverCalls* driver_calls() noexcept {
  if (g_resolved.load(std::memory_order_acquire)) return &g_calls;
  pthread_mutex_lock(&g_lock);
  if (!g_resolved.load(std::memory_order_relaxed) && resolve(g_calls)) g_resolved.store(true, std::memory_order_release);
  pthread_mutex_unlock(&g_lock);
  return g_resolved.load(std::memory_order_acquire) ? &g_calls : nullptr;
}

CallPlace current_place() noexcept {
  CallPlace where;
  const DriverCalls* d = driver_calls();
  if (!d) return where;
  CUcontext ctx = nullptr;
  if (d->ctx_get_current && d->ctx_get_current(&ctx) == CUDA_SUCCESS)
    where.context = reinterpret_cast<std::uint64_t>(ctx);
  CUdevice dev = 0;
  if (d->ctx_get_device && d->ctx_get_device(&dev) == CUDA_SUCCESS) where.device = dev;
  return where;
}

int device_of_context(const DriverCalls& d, CUcontext context) noexcept {
  if (!context || !d.ctx_push_current || !d.ctx_pop_current || !d.ctx_get_device) return -1;
  if (d.ctx_push_current(context) != CUDA_SUCCESS) return -1;
  CUdevice dev = -1;
  const CUresult rc = d.ctx_get_device(&dev);
  CUcontext popped = nullptr;
  d.ctx_pop_current(&popped);
  return rc == CUDA_SUCCESS ? static_cast<int>(dev) : -1;
}

CUresult synchronize_context(const DriverCalls& d, std::uint64_t context) noexcept {
  CUcontext current = nullptr;
  const auto owner = reinterpret_cast<CUcontext>(context);
  const bool switch_to_owner = owner && d.ctx_push_current && d.ctx_pop_current && d.ctx_get_current &&
                               d.ctx_get_current(&current) == CUDA_SUCCESS && current != owner;
  CUresult rc = CUDA_SUCCESS;
  if (switch_to_owner) {
    rc = timed(ring::DriverCall::ctx_synchronize, [&] {
      const CUresult pushed = d.ctx_push_current(owner);
      if (pushed != CUDA_SUCCESS) return pushed;
      const CUresult synced = d.ctx_synchronize();
      CUcontext popped = nullptr;
      d.ctx_pop_current(&popped);
      return synced;
    });
  } else {
    rc = timed(ring::DriverCall::ctx_synchronize, [&] { return d.ctx_synchronize(); });
  }
  // No context (none current, or the owner was destroyed with cudaDeviceReset): no work
  // that could still use the buffer.
  if (rc == CUDA_ERROR_INVALID_CONTEXT || rc == CUDA_ERROR_CONTEXT_IS_DESTROYED) rc = CUDA_SUCCESS;
  return rc;
}

}  // namespace cudadiag::interposer

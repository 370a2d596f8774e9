// Driver API table through the runtime's entry-point query (no link against libcuda).
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/runtime/driver_api.h"
#include "kernels/runtime/gpu_runtime.h"

namespace cudadiag::gpu {
namespace {

// Every function used here exists since CUDA 10.2; asking for the 12.0 ABI keeps the
// signatures the ones declared in DriverApi on any driver >= 12.0.
constexpr unsigned kDriverAbiVersion = 12000;

void* entry_point_or_null(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverAbiVersion, cudaEnableDefault, &status);
  if (rc != cudaSuccess || status != cudaDriverEntryPointSuccess) return nullptr;
  return fn;
}

template <typename Fn>
void load(Fn& slot, const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverAbiVersion, cudaEnableDefault, &status);
  if (rc != cudaSuccess) {
    CudaFailure f;
    f.code = static_cast<int>(rc);
    f.name = cudaGetErrorName(rc);
    f.message = std::string(cudaGetErrorString(rc)) + " (looking up " + symbol + ")";
    f.surfaced_at = "driver_entry_point";
    f.api_call = std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")";
    f.location = CUDADIAG_HERE;
    throw CudaError(std::move(f));
  }
  if (status != cudaDriverEntryPointSuccess || fn == nullptr) {
    CudaFailure f;
    f.code = static_cast<int>(cudaErrorSymbolNotFound);
    f.name = cudaGetErrorName(cudaErrorSymbolNotFound);
    f.message = std::string("the driver does not provide ") + symbol +
                (status == cudaDriverEntryPointVersionNotSufficent ? " (driver too old)" : "");
    f.surfaced_at = "driver_entry_point";
    f.api_call = std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")";
    f.location = CUDADIAG_HERE;
    throw CudaError(std::move(f));
  }
  slot = reinterpret_cast<Fn>(fn);
}

DriverApi load_all() {
  DriverApi api;
  load(api.get_error_name, "cuGetErrorName");
  load(api.get_error_string, "cuGetErrorString");
  load(api.mem_get_allocation_granularity, "cuMemGetAllocationGranularity");
  load(api.mem_address_reserve, "cuMemAddressReserve");
  load(api.mem_address_free, "cuMemAddressFree");
  load(api.mem_create, "cuMemCreate");
  load(api.mem_release, "cuMemRelease");
  load(api.mem_map, "cuMemMap");
  load(api.mem_unmap, "cuMemUnmap");
  load(api.mem_set_access, "cuMemSetAccess");
  return api;
}

}  // namespace

const DriverApi& driver_api() {
  // Not a function-local static initialised by a throwing call: a failed load must be
  // retried (and reported) by the next caller, not leave a half-built table.
  static DriverApi api;
  static bool loaded = false;
  if (!loaded) {
    api = load_all();
    loaded = true;
  }
  return api;
}

void* driver_function(const char* symbol) { return entry_point_or_null(symbol); }

std::string driver_error_name(int rc) {
  using Fn = CUresult (*)(CUresult, const char**);
  static Fn fn = reinterpret_cast<Fn>(entry_point_or_null("cuGetErrorName"));
  const char* s = nullptr;
  if (fn && fn(static_cast<CUresult>(rc), &s) == CUDA_SUCCESS && s) return s;
  return "CUresult " + std::to_string(rc);
}

std::string driver_error_string(int rc) {
  using Fn = CUresult (*)(CUresult, const char**);
  static Fn fn = reinterpret_cast<Fn>(entry_point_or_null("cuGetErrorString"));
  const char* s = nullptr;
  if (fn && fn(static_cast<CUresult>(rc), &s) == CUDA_SUCCESS && s) return s;
  return "CUresult " + std::to_string(rc);
}

}  // namespace cudadiag::gpu

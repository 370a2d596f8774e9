#pragma once
// The few driver API functions cudadiag needs, obtained through
// cudaGetDriverEntryPointByVersion so the binary never links against libcuda.
// <cuda.h> is included for its types only.
#include <cuda.h>

#include <string>

namespace cudadiag::gpu {

struct DriverApi {
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*mem_get_allocation_granularity)(size_t*, const CUmemAllocationProp*,
                                             CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*mem_address_reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*mem_address_free)(CUdeviceptr, size_t) = nullptr;
  CUresult (*mem_create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                         unsigned long long) = nullptr;
  CUresult (*mem_release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*mem_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*mem_unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*mem_set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
};

// Loads the table once per process; throws CudaError (surfaced_at "driver_entry_point",
// api_call naming the missing symbol) when the driver does not provide one.
const DriverApi& driver_api();

// Any other driver function by name (12.0 ABI), or nullptr when the driver lacks it.
void* driver_function(const char* symbol);

// "CUDA_ERROR_ILLEGAL_ADDRESS" / its description, or "CUresult N" when the driver
// cannot say (never throws).
std::string driver_error_name(int rc);
std::string driver_error_string(int rc);

}  // namespace cudadiag::gpu

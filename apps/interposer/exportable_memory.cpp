#include "apps/interposer/exportable_memory.h"

#include <atomic>

namespace cudadiag::interposer {
namespace {

constexpr int kMaxExportableDevices = 64;

// Each device's answer + 1 (0: not asked yet).
std::atomic<int> g_handle_type[kMaxExportableDevices];

}  // namespace

CUmemAllocationHandleType exportable_handle_type(const DriverCalls& d, int device) noexcept {
  if (device < 0 || device >= kMaxExportableDevices) return CU_MEM_HANDLE_TYPE_NONE;
  int known = g_handle_type[device].load(std::memory_order_relaxed);
  if (known == 0) {
    int supported = 0;
    if (!d.device_get_attribute ||
        d.device_get_attribute(&supported, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device) !=
            CUDA_SUCCESS)
      supported = 0;
    known = 1 + (supported ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE);
    g_handle_type[device].store(known, std::memory_order_relaxed);
  }
  return static_cast<CUmemAllocationHandleType>(known - 1);
}

}  // namespace cudadiag::interposer

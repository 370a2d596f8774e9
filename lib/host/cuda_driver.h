#pragma once
// The CUDA driver API (libcuda.so.1), loaded at run time with dlopen like NVML: no
// cuda.h and no link dependency. It is what every CUDA program needs, so it decides
// whether the GPU part can run; NVML (libnvidia-ml.so.1) only adds health facts.
// cuInit can hang or crash on a broken install: this runs in the `__probe-driver`
// child (host/driver_probe.h), never in the parent. cuInit applies
// CUDA_VISIBLE_DEVICES, so the devices listed are the ones this process may use,
// numbered within that set.
#include <string>

#include "report/report.h"

namespace cudadiag::host::cuda_driver {

using Result = int;  // CUresult
using Device = int;  // CUdevice
inline constexpr Result kSuccess = 0;
inline constexpr Result kErrorStubLibrary = 34;  // CUDA_ERROR_STUB_LIBRARY: the toolkit's stub libcuda
inline constexpr Result kErrorNoDevice = 100;    // CUDA_ERROR_NO_DEVICE
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;

struct Uuid {  // CUuuid
  unsigned char bytes[16];
};

// The functions used; any pointer may be null (symbol missing).
struct Api {
  Result (*init)(unsigned int) = nullptr;
  Result (*driver_get_version)(int*) = nullptr;
  Result (*get_error_name)(Result, const char**) = nullptr;
  Result (*device_get_count)(int*) = nullptr;
  Result (*device_get)(Device*, int) = nullptr;
  Result (*device_get_name)(char*, int, Device) = nullptr;
  Result (*device_get_uuid)(Uuid*, Device) = nullptr;  // cuDeviceGetUuid_v2, else cuDeviceGetUuid
  Result (*device_total_mem)(unsigned long long*, Device) = nullptr;  // cuDeviceTotalMem_v2
  Result (*device_get_attribute)(int*, int, Device) = nullptr;
  Result (*device_get_pci_bus_id)(char*, int, Device) = nullptr;
};

inline constexpr const char* kLibrary = "libcuda.so.1";
// The words every command uses for a missing driver or GPU (after "<library> not found: ").
inline constexpr const char* kNoDriverConsequence = "no NVIDIA driver";
inline constexpr const char* kNoGpuSeen = "the CUDA driver sees no GPU";

// Loads the library once per process and resolves the symbols. False (with the loader's
// text in `reason`) when it cannot be loaded. The library stays loaded.
bool load(Api& api, std::string& reason, const std::string& library = kLibrary);

// "CUDA_ERROR_NO_DEVICE (100)": the driver's own name when it has one.
std::string error_text(const Api& api, Result rc);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the text NVML and nvidia-smi use.
std::string uuid_string(const Uuid& u);

// cuInit, then every device:
// {available, library, status: ok|no_driver|no_device|cuda_error, reason ("" when ok),
//  detail (what the loader or cuInit said), version (cuDriverGetVersion, null when
//  unknown), devices:[{index, name, uuid, pci_bus_id, total_memory_bytes,
//  compute_capability}]}
report::json snapshot(const Api& api);

// The answer when libcuda.so.1 cannot be loaded; `loader_text` is dlerror's.
report::json not_loaded(const std::string& loader_text);

}  // namespace cudadiag::host::cuda_driver

namespace cudadiag::host {

// load + snapshot on this machine (the `__probe-driver` child's whole job).
report::json cuda_driver_snapshot();

}  // namespace cudadiag::host

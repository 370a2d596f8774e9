#pragma once
// NVML, loaded at run time with dlopen("libnvidia-ml.so.1"): no nvml.h at build time,
// no link dependency, and a host without the driver still gets a report. Only calls
// with plain out-parameters are used; the one struct (PciInfo) is declared with the
// layout of nvml.h's nvmlPciInfo_t and read through a buffer with slack behind it.
// A missing symbol or a NOT_SUPPORTED answer becomes null, never an error.
#include <string>

#include "report/report.h"

namespace cudadiag::host::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kNotSupported = 3;
inline constexpr Return kInsufficientSize = 7;
inline constexpr Return kDriverNotLoaded = 9;

struct DeviceSt;               // opaque, like nvml.h's struct nvmlDevice_st
using Device = DeviceSt*;      // nvmlDevice_t

struct PciInfo {               // nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3)
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];              // "00000000:3B:00.0"
};

struct Memory {                // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// Enum values of nvml.h used as arguments.
inline constexpr int kMemoryErrorCorrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
inline constexpr int kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int kVolatileEcc = 0;             // NVML_VOLATILE_ECC
inline constexpr int kAggregateEcc = 1;            // NVML_AGGREGATE_ECC
inline constexpr int kRetiredMultipleSingleBit = 0;  // NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
inline constexpr int kRetiredDoubleBit = 1;          // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
inline constexpr int kClockSm = 1;                 // NVML_CLOCK_SM
inline constexpr int kClockMem = 2;                // NVML_CLOCK_MEM
inline constexpr int kTemperatureGpu = 0;          // NVML_TEMPERATURE_GPU
inline constexpr int kP2pCapsNvlink = 2;           // NVML_P2P_CAPS_INDEX_NVLINK
inline constexpr int kP2pStatusOk = 0;             // NVML_P2P_STATUS_OK
inline constexpr unsigned int kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

// The functions used; any pointer may be null (symbol missing in this driver).
struct Api {
  Return (*init_v2)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*system_get_driver_version)(char*, unsigned int) = nullptr;
  Return (*system_get_cuda_driver_version_v2)(int*) = nullptr;
  Return (*device_get_count_v2)(unsigned int*) = nullptr;
  Return (*device_get_handle_by_index_v2)(unsigned int, Device*) = nullptr;
  Return (*device_get_name)(Device, char*, unsigned int) = nullptr;
  Return (*device_get_uuid)(Device, char*, unsigned int) = nullptr;
  Return (*device_get_serial)(Device, char*, unsigned int) = nullptr;
  Return (*device_get_vbios_version)(Device, char*, unsigned int) = nullptr;
  Return (*device_get_pci_info_v3)(Device, PciInfo*) = nullptr;
  Return (*device_get_ecc_mode)(Device, int* current, int* pending) = nullptr;
  Return (*device_get_total_ecc_errors)(Device, int error_type, int counter_type,
                                        unsigned long long* count) = nullptr;
  Return (*device_get_retired_pages)(Device, int cause, unsigned int* count,
                                     unsigned long long* addresses) = nullptr;
  Return (*device_get_remapped_rows)(Device, unsigned int* corrected, unsigned int* uncorrected,
                                     unsigned int* pending, unsigned int* failure) = nullptr;
  Return (*device_get_persistence_mode)(Device, int* mode) = nullptr;
  Return (*device_get_mig_mode)(Device, unsigned int* current, unsigned int* pending) = nullptr;
  Return (*device_get_compute_mode)(Device, int* mode) = nullptr;
  Return (*device_get_clock_info)(Device, int clock_type, unsigned int* mhz) = nullptr;
  Return (*device_get_temperature)(Device, int sensor, unsigned int* celsius) = nullptr;
  Return (*device_get_power_usage)(Device, unsigned int* milliwatts) = nullptr;
  Return (*device_get_memory_info)(Device, Memory* memory) = nullptr;
  // Topology (several GPUs): the closest common ancestor of two GPUs (an
  // nvmlGpuTopologyLevel_t), whether they reach each other over NVLink, the NVLink links
  // of one GPU that are up.
  Return (*device_get_topology_common_ancestor)(Device, Device, int* level) = nullptr;
  Return (*device_get_p2p_status)(Device, Device, int caps_index, int* status) = nullptr;
  Return (*device_get_nvlink_state)(Device, unsigned int link, int* is_active) = nullptr;
};

// "same_board", "single_switch", "multiple_switches", "host_bridge", "same_numa_node",
// "system" for an nvmlGpuTopologyLevel_t; "unknown" otherwise.
const char* topology_level_name(int level);

// Loads the library once per process and resolves the symbols. False (with the dlerror
// text in `reason`) when the library cannot be loaded. The library stays loaded.
bool load(Api& api, std::string& reason, const std::string& library = "libnvidia-ml.so.1");

// Human text for a return code: the library's own string when available.
std::string error_text(const Api& api, Return rc);

// Initialises NVML, reads everything, shuts it down:
// {nvml:{available, library, reason}, driver:{version, cuda_driver_version, ...},
//  devices:[{index, name, uuid, serial, pci_bus_id, vbios, ecc_mode, ecc_errors,
//            retired_pages, remapped_rows, persistence_mode, mig_mode, compute_mode,
//            clocks_mhz, temperature_c, power_w, memory, nvlink_active_links,
//            unavailable:{field: why}}],
//  topology:[{a, b, path, nvlink}]  (every pair of GPUs, when there are several)}
report::json snapshot(const Api& api);

}  // namespace cudadiag::host::nvml

namespace cudadiag::host {

// nvml::load + nvml::snapshot on this machine; {nvml:{available:false, reason}} when
// the library is missing.
report::json nvml_snapshot();

}  // namespace cudadiag::host

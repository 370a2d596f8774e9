#pragma once
// One devices[] list from two views of the GPUs: NVML (the whole machine: ECC, clocks,
// serials) and the CUDA probe child (what CUDA sees: ordinals, compute capability,
// limits). They are matched by UUID, then by PCI bus id.
#include <string>

#include "host/pci_bus_id.h"
#include "report/report.h"

namespace cudadiag::host {

// Each entry: {index (CUDA ordinal; absent when CUDA does not see it), name, uuid,
// pci_bus_id, serial (when NVML knows it), visible_to_cuda, cuda:{...}|null,
// nvml:{...}|null}. CUDA devices come first in ordinal order, then NVML-only ones.
// cuda_devices null means the probe did not run: visible_to_cuda is then left out.
report::json merge_devices(const report::json& nvml_devices, const report::json& cuda_devices);

}  // namespace cudadiag::host

#pragma once
// PCI bus ids of GPUs as the tools write them: NVML "00000000:3B:00.0", CUDA
// (cuDeviceGetPCIBusId) "0000:3b:00.0", the kernel log's Xid lines "0000:3b:00" (no
// function). One GPU, three spellings: compared here, never as strings.
#include <string>

namespace cudadiag::host {

// "00000000:3B:00.0" (NVML) and "0000:3b:00.0" (CUDA) -> "0000:3b:00.0": lower case, the
// domain padded to 4 digits; anything else lower-cased as it is.
std::string normalize_pci_bus_id(const std::string& id);

// The GPU an id names, "domain:bus:device" without the function ("0000:3b:00"); "" when
// `id` is not of that form.
std::string pci_device_key(const std::string& id);

// Whether two ids name the same GPU (a GPU is one function of its PCI device): false when
// either is not an id.
bool same_pci_device(const std::string& a, const std::string& b);

}  // namespace cudadiag::host

#pragma once
// The GPUs a job was given. A scheduler or a user restricts CUDA to some devices with
// CUDA_VISIBLE_DEVICES (indices, UUIDs or MIG ids, in the order CUDA numbers them); a
// Slurm job without it carries the GPUs it was allocated in SLURM_STEP_GPUS or
// SLURM_JOB_GPUS (PCI-order indices), and GPU_DEVICE_ORDINAL is the generic form.
// cudadiag tests exactly those devices: the driver probe sees what the binding allows,
// and each child is narrowed to one entry of it, never widened to a global index.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::host {

struct DeviceBinding {
  std::string source;                // "" (none), CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS, GPU_DEVICE_ORDINAL
  std::string value;                 // as the environment gave it
  std::vector<std::string> entries;  // value split at ',', blanks trimmed, in order

  bool restricts() const { return !source.empty(); }
  // Entries are relative to the order the user chose (CUDA_DEVICE_ORDER): only for
  // CUDA_VISIBLE_DEVICES; the others name PCI-order indices.
  bool user_order() const { return source == "CUDA_VISIBLE_DEVICES"; }
  // "CUDA_VISIBLE_DEVICES=1"; "" when none.
  std::string describe() const { return restricts() ? source + "=" + value : std::string(); }
};

// From an environment lookup (getenv, or a test's map). CUDA_VISIBLE_DEVICES wins, even
// when empty (then no device is visible).
DeviceBinding device_binding(const std::function<const char*(const char*)>& lookup);

// This process's binding.
DeviceBinding device_binding_from_environment();

// What a process that must see the bound devices gets on top of the inherited
// environment: nothing for CUDA_VISIBLE_DEVICES (already there); for a Slurm or generic
// binding CUDA_VISIBLE_DEVICES set to it; CUDA_DEVICE_ORDER=PCI_BUS_ID unless the user's
// own CUDA_VISIBLE_DEVICES depends on the user's order.
std::map<std::string, std::string> binding_env(const DeviceBinding& b);

// The value of CUDA_VISIBLE_DEVICES that narrows a process to the device the driver
// numbered `ordinal` (of `visible` devices) under this binding: the binding's own entry
// when the driver saw exactly one device per entry, else the device's UUID; an index
// only when nothing else names it and there is no binding.
std::string narrowed_visible_devices(const DeviceBinding& b, int ordinal, size_t visible, const std::string& uuid);

// {source, value} or null when nothing restricts the devices.
report::json to_json(const DeviceBinding& b);

}  // namespace cudadiag::host

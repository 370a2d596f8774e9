#pragma once
// The GPUs a job was given. A scheduler or a user restricts CUDA to some devices with
// CUDA_VISIBLE_DEVICES (indices, UUIDs or MIG ids, in the order CUDA numbers them); a
// Slurm job without it carries the GPUs it was allocated in SLURM_STEP_GPUS or
// SLURM_JOB_GPUS (PCI-order indices), and GPU_DEVICE_ORDINAL is the generic form.
// cudadiag tests exactly those devices: the driver probe sees what the binding allows,
// and each child is narrowed to one entry of it, never widened to a global index.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "report/report.h"
#include "util/choices.h"

namespace cudadiag::host {

// The variable a binding came from; none: nothing restricts the devices.
enum class BindingSource : std::uint8_t { none, cuda_visible_devices, slurm_step_gpus, slurm_job_gpus, gpu_device_ordinal };
// The variables by name, in the order they win.
inline constexpr ChoiceTable<BindingSource, 4> kBindingVariables{{
    {BindingSource::cuda_visible_devices, "CUDA_VISIBLE_DEVICES"},
    {BindingSource::slurm_step_gpus, "SLURM_STEP_GPUS"},
    {BindingSource::slurm_job_gpus, "SLURM_JOB_GPUS"},
    {BindingSource::gpu_device_ordinal, "GPU_DEVICE_ORDINAL"},
}};

struct DeviceBinding {
  BindingSource source = BindingSource::none;
  std::string value;                 // as the environment gave it
  std::vector<std::string> entries;  // value split at ',', blanks trimmed, in order

  bool restricts() const { return source != BindingSource::none; }
  // Entries are relative to the order the user chose (CUDA_DEVICE_ORDER): only for
  // CUDA_VISIBLE_DEVICES; the others name PCI-order indices.
  bool user_order() const { return source == BindingSource::cuda_visible_devices; }
  // The variable's name; "" when none.
  std::string variable() const { return restricts() ? std::string(choice_name(kBindingVariables, source)) : std::string(); }
  // "CUDA_VISIBLE_DEVICES=1"; "" when none.
  std::string describe() const { return restricts() ? variable() + "=" + value : std::string(); }
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

#include "host/device_binding.h"

#include <cstdlib>
#include <sstream>
#include "util/trim.h"

namespace cudadiag::host {
namespace {

std::vector<std::string> split_entries(const std::string& value) {
  std::vector<std::string> out;
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = std::string(util::trim_blanks(item));
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

DeviceBinding device_binding(const std::function<const char*(const char*)>& lookup) {
  DeviceBinding b;
  for (const auto& variable : kBindingVariables) {
    const char* v = lookup(std::string(variable.name).c_str());
    if (!v) continue;
    // Only CUDA_VISIBLE_DEVICES means "no device" when empty; an empty Slurm variable says nothing.
    if (*v == '\0' && variable.value != BindingSource::cuda_visible_devices) continue;
    b.source = variable.value;
    b.value = v;
    b.entries = split_entries(b.value);
    break;
  }
  return b;
}

DeviceBinding device_binding_from_environment() {
  return device_binding([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

std::map<std::string, std::string> binding_env(const DeviceBinding& b) {
  std::map<std::string, std::string> env;
  if (b.user_order()) return env;
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  if (b.restricts()) env["CUDA_VISIBLE_DEVICES"] = b.value;
  return env;
}

std::string narrowed_visible_devices(const DeviceBinding& b, int ordinal, size_t visible, const std::string& uuid) {
  if (b.restricts() && ordinal >= 0 && b.entries.size() == visible && static_cast<size_t>(ordinal) < visible)
    return b.entries[static_cast<size_t>(ordinal)];
  if (!uuid.empty()) return uuid;
  // Without a binding the ordinal is a PCI-order index (binding_env); with one that the
  // driver did not match entry for entry, the entry at that place is still the user's.
  if (b.restricts() && ordinal >= 0 && static_cast<size_t>(ordinal) < b.entries.size())
    return b.entries[static_cast<size_t>(ordinal)];
  return std::to_string(ordinal);
}

report::json to_json(const DeviceBinding& b) {
  if (!b.restricts()) return nullptr;
  return report::json{{"source", b.variable()}, {"value", b.value}};
}

}  // namespace cudadiag::host

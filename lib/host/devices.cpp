#include "host/devices.h"

#include <cctype>
#include <vector>

namespace cudadiag::host {
namespace {

using report::json;

std::string str(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) return {};
  return obj[key].get<std::string>();
}

bool same_device(const json& nvml, const json& cuda) {
  const auto nu = str(nvml, "uuid"), cu = str(cuda, "uuid");
  if (!nu.empty() && nu == cu) return true;
  const auto np = normalize_pci_bus_id(str(nvml, "pci_bus_id"));
  const auto cp = normalize_pci_bus_id(str(cuda, "pci_bus_id"));
  return !np.empty() && np == cp;
}

void put_string(json& out, const char* key, const std::string& a, const std::string& b = {}) {
  if (!a.empty()) out[key] = a;
  else if (!b.empty()) out[key] = b;
}

}  // namespace

json merge_devices(const json& nvml_devices, const json& cuda_devices) {
  json out = json::array();
  std::vector<bool> used(nvml_devices.is_array() ? nvml_devices.size() : 0, false);
  const bool cuda_known = cuda_devices.is_array();  // null: the CUDA probe did not run
  if (cuda_devices.is_array()) {
    for (const auto& c : cuda_devices) {
      json n = nullptr;
      for (size_t i = 0; i < used.size(); ++i) {
        if (!used[i] && same_device(nvml_devices[i], c)) {
          used[i] = true;
          n = nvml_devices[i];
          break;
        }
      }
      json d = json::object();
      if (c.contains("index") && c["index"].is_number_integer()) d["index"] = c["index"];
      put_string(d, "name", str(c, "name"), str(n, "name"));
      put_string(d, "uuid", str(n, "uuid"), str(c, "uuid"));
      put_string(d, "pci_bus_id", normalize_pci_bus_id(str(c, "pci_bus_id")),
                 normalize_pci_bus_id(str(n, "pci_bus_id")));
      put_string(d, "serial", str(n, "serial"));
      d["visible_to_cuda"] = true;
      d["cuda"] = c;
      d["nvml"] = n;
      out.push_back(std::move(d));
    }
  }
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i]) continue;
    const auto& n = nvml_devices[i];
    json d = json::object();
    put_string(d, "name", str(n, "name"));
    put_string(d, "uuid", str(n, "uuid"));
    put_string(d, "pci_bus_id", normalize_pci_bus_id(str(n, "pci_bus_id")));
    put_string(d, "serial", str(n, "serial"));
    if (cuda_known) d["visible_to_cuda"] = false;
    d["cuda"] = nullptr;
    d["nvml"] = n;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cudadiag::host

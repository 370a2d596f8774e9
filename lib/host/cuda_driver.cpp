#include "host/cuda_driver.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "host/dl_symbols.h"

namespace cudadiag::host::cuda_driver {
namespace {

using report::json;

json device_json(const Api& api, int ordinal) {
  json d{{"index", ordinal}};
  Device dev = ordinal;
  if (api.device_get && api.device_get(&dev, ordinal) != kSuccess) dev = ordinal;
  char buf[256] = {};
  if (api.device_get_name && api.device_get_name(buf, sizeof buf - 1, dev) == kSuccess)
    d["name"] = std::string(buf, ::strnlen(buf, sizeof buf));
  Uuid u{};
  if (api.device_get_uuid && api.device_get_uuid(&u, dev) == kSuccess) d["uuid"] = uuid_string(u);
  char pci[64] = {};
  if (api.device_get_pci_bus_id && api.device_get_pci_bus_id(pci, sizeof pci - 1, dev) == kSuccess)
    d["pci_bus_id"] = std::string(pci, ::strnlen(pci, sizeof pci));
  unsigned long long bytes = 0;
  if (api.device_total_mem && api.device_total_mem(&bytes, dev) == kSuccess) d["total_memory_bytes"] = bytes;
  int major = -1, minor = -1;
  if (api.device_get_attribute && api.device_get_attribute(&major, kAttrComputeCapabilityMajor, dev) == kSuccess &&
      api.device_get_attribute(&minor, kAttrComputeCapabilityMinor, dev) == kSuccess)
    d["compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
  return d;
}

json unavailable(const std::string& status, const std::string& reason, const std::string& detail) {
  return json{{"available", false}, {"library", kLibrary}, {"status", status},
              {"reason", reason},   {"detail", detail},    {"version", nullptr},
              {"devices", json::array()}};
}

}  // namespace

std::string error_text(const Api& api, Result rc) {
  const char* name = nullptr;
  if (!api.get_error_name || api.get_error_name(rc, &name) != kSuccess || !name) name = "CUDA_ERROR";
  return std::string(name) + " (" + std::to_string(rc) + ")";
}

std::string uuid_string(const Uuid& u) {
  std::string s = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(u.bytes[i]));
    s += hex;
  }
  return s;
}

bool load(Api& api, std::string& reason, const std::string& library) {
  void* lib = open_library(library, reason);
  if (!lib) return false;
  resolve_symbol(lib, "cuInit", api.init);
  resolve_symbol(lib, "cuDriverGetVersion", api.driver_get_version);
  resolve_symbol(lib, "cuGetErrorName", api.get_error_name);
  resolve_symbol(lib, "cuDeviceGetCount", api.device_get_count);
  resolve_symbol(lib, "cuDeviceGet", api.device_get);
  resolve_symbol(lib, "cuDeviceGetName", api.device_get_name);
  resolve_symbol(lib, "cuDeviceGetUuid_v2", api.device_get_uuid);
  if (!api.device_get_uuid) resolve_symbol(lib, "cuDeviceGetUuid", api.device_get_uuid);
  resolve_symbol(lib, "cuDeviceTotalMem_v2", api.device_total_mem);
  resolve_symbol(lib, "cuDeviceGetAttribute", api.device_get_attribute);
  resolve_symbol(lib, "cuDeviceGetPCIBusId", api.device_get_pci_bus_id);
  return true;
}

json not_loaded(const std::string& loader_text) {
  return unavailable("no_driver", std::string(kLibrary) + " not found: " + kNoDriverConsequence, loader_text);
}

json snapshot(const Api& api) {
  if (!api.init || !api.device_get_count)
    return unavailable("no_driver", std::string(kLibrary) + " lacks cuInit/cuDeviceGetCount: " + kNoDriverConsequence,
                       "symbol missing");
  const Result rc = api.init(0);
  if (rc != kSuccess) {
    const std::string said = "cuInit: " + error_text(api, rc);
    if (rc == kErrorStubLibrary)
      return unavailable("no_driver", std::string(kLibrary) + " is the CUDA toolkit's stub: " + kNoDriverConsequence, said);
    if (rc == kErrorNoDevice) return unavailable("no_device", kNoGpuSeen, said);
    return unavailable("cuda_error", "the CUDA driver could not start (" + said + ")", said);
  }
  json out{{"available", true}, {"library", kLibrary}, {"status", "ok"}, {"reason", ""}, {"detail", ""},
           {"version", nullptr}, {"devices", json::array()}};
  int version = 0;
  if (api.driver_get_version && api.driver_get_version(&version) == kSuccess) out["version"] = version;
  int count = 0;
  const Result rc_count = api.device_get_count(&count);
  if (rc_count != kSuccess) {
    out["status"] = "cuda_error";
    out["detail"] = "cuDeviceGetCount: " + error_text(api, rc_count);
    out["reason"] = "the CUDA driver could not count its devices (" + out["detail"].get<std::string>() + ")";
    return out;
  }
  for (int i = 0; i < count && i < 1024; ++i) out["devices"].push_back(device_json(api, i));
  if (count <= 0) {
    out["status"] = "no_device";
    out["reason"] = kNoGpuSeen;
  }
  return out;
}

}  // namespace cudadiag::host::cuda_driver

namespace cudadiag::host {

report::json cuda_driver_snapshot() {
  static cuda_driver::Api api;
  std::string loader_text;
  if (!cuda_driver::load(api, loader_text)) return cuda_driver::not_loaded(loader_text);
  return cuda_driver::snapshot(api);
}

}  // namespace cudadiag::host

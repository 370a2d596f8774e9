#include "host/nvml.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "host/dl_symbols.h"

namespace cudadiag::host::nvml {
namespace {

using report::json;

// Names of nvmlReturn_t values, for drivers whose library lacks nvmlErrorString.
const char* fallback_error_name(Return rc) {
  switch (rc) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 12: return "Library Not Found";
    case 13: return "Function Not Found";
    case 14: return "Corrupted infoROM";
    case 15: return "GPU is lost";
    case 16: return "GPU requires reset";
    case 18: return "RM has detected an NVML/RM version mismatch";
    case 999: return "Unknown Error";
    default: return "error";
  }
}

// Collects one device's fields; a failed or missing call records why under "unavailable".
class DeviceReader {
 public:
  DeviceReader(const Api& api, json& out) : api_(api), out_(out) {}

  // Sets out[key] from fn's result when the call succeeded, else null + reason.
  template <typename Call>
  void field(const char* key, bool present, Call&& call) {
    if (!present) {
      out_[key] = nullptr;
      unavailable_[key] = "symbol missing in this driver's NVML";
      return;
    }
    json value;
    const Return rc = call(value);
    if (rc == kSuccess) {
      out_[key] = std::move(value);
    } else {
      out_[key] = nullptr;
      unavailable_[key] = error_text(api_, rc);
    }
  }

  void finish() {
    if (!unavailable_.empty()) out_["unavailable"] = std::move(unavailable_);
  }

 private:
  const Api& api_;
  json& out_;
  json unavailable_ = json::object();
};

// Reads a string attribute into a zeroed buffer that is longer than any NVML size.
template <typename Fn>
Return read_string(Fn fn, Device d, json& value) {
  char buf[256] = {};
  const Return rc = fn(d, buf, 255);
  if (rc == kSuccess) value = std::string(buf, ::strnlen(buf, sizeof buf));
  return rc;
}

std::string enable_state(int v) { return v == 0 ? "disabled" : v == 1 ? "enabled" : std::to_string(v); }

std::string compute_mode_name(int v) {
  switch (v) {
    case 0: return "default";
    case 1: return "exclusive_thread";
    case 2: return "prohibited";
    case 3: return "exclusive_process";
    default: return std::to_string(v);
  }
}

void read_identity(const Api& api, Device d, DeviceReader& r) {
  r.field("name", api.device_get_name, [&](json& v) { return read_string(api.device_get_name, d, v); });
  r.field("uuid", api.device_get_uuid, [&](json& v) { return read_string(api.device_get_uuid, d, v); });
  r.field("serial", api.device_get_serial, [&](json& v) { return read_string(api.device_get_serial, d, v); });
  r.field("pci_bus_id", api.device_get_pci_info_v3, [&](json& v) {
    // Slack behind the struct: a driver writing a larger layout cannot corrupt the stack.
    struct {
      PciInfo info;
      char slack[512];
    } buf{};
    const Return rc = api.device_get_pci_info_v3(d, &buf.info);
    if (rc == kSuccess) v = std::string(buf.info.busId, ::strnlen(buf.info.busId, sizeof buf.info.busId));
    return rc;
  });
  r.field("vbios", api.device_get_vbios_version,
          [&](json& v) { return read_string(api.device_get_vbios_version, d, v); });
}

void read_health(const Api& api, Device d, DeviceReader& r) {
  r.field("ecc_mode", api.device_get_ecc_mode, [&](json& v) {
    int cur = -1, pending = -1;
    const Return rc = api.device_get_ecc_mode(d, &cur, &pending);
    v = json{{"current", enable_state(cur)}, {"pending", enable_state(pending)}};
    return rc;
  });
  r.field("ecc_errors", api.device_get_total_ecc_errors, [&](json& v) {
    v = json::object();
    Return first_rc = kSuccess;
    for (const auto& [counter, counter_name] : {std::pair{kVolatileEcc, "volatile"}, std::pair{kAggregateEcc, "aggregate"}}) {
      json c = json::object();
      for (const auto& [type, type_name] : {std::pair{kMemoryErrorCorrected, "corrected"}, std::pair{kMemoryErrorUncorrected, "uncorrected"}}) {
        unsigned long long n = 0;
        const Return rc = api.device_get_total_ecc_errors(d, type, counter, &n);
        if (rc == kSuccess) c[type_name] = n;
        else { c[type_name] = nullptr; if (first_rc == kSuccess) first_rc = rc; }
      }
      v[counter_name] = c;
    }
    // All four unavailable (ECC off, or not supported): report it as unavailable.
    const bool any = !v["volatile"]["corrected"].is_null() || !v["volatile"]["uncorrected"].is_null() ||
                     !v["aggregate"]["corrected"].is_null() || !v["aggregate"]["uncorrected"].is_null();
    return any ? kSuccess : first_rc;
  });
  r.field("retired_pages", api.device_get_retired_pages, [&](json& v) {
    v = json::object();
    Return last = kSuccess;
    for (const auto& [cause, name] : {std::pair{kRetiredMultipleSingleBit, "single_bit"}, std::pair{kRetiredDoubleBit, "double_bit"}}) {
      unsigned int count = 0;  // 0 with no buffer: ask for the count only
      const Return rc = api.device_get_retired_pages(d, cause, &count, nullptr);
      if (rc == kSuccess || rc == kInsufficientSize) v[name] = count;
      else { v[name] = nullptr; last = rc; }
    }
    return v["single_bit"].is_null() && v["double_bit"].is_null() ? last : kSuccess;
  });
  r.field("remapped_rows", api.device_get_remapped_rows, [&](json& v) {
    unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
    const Return rc = api.device_get_remapped_rows(d, &corr, &unc, &pending, &failure);
    v = json{{"corrected", corr}, {"uncorrected", unc}, {"pending", pending != 0}, {"failure", failure != 0}};
    return rc;
  });
}

void read_modes(const Api& api, Device d, DeviceReader& r) {
  r.field("persistence_mode", api.device_get_persistence_mode, [&](json& v) {
    int m = -1;
    const Return rc = api.device_get_persistence_mode(d, &m);
    v = enable_state(m);
    return rc;
  });
  r.field("mig_mode", api.device_get_mig_mode, [&](json& v) {
    unsigned int cur = 0, pending = 0;
    const Return rc = api.device_get_mig_mode(d, &cur, &pending);
    v = json{{"current", enable_state(static_cast<int>(cur))}, {"pending", enable_state(static_cast<int>(pending))}};
    return rc;
  });
  r.field("compute_mode", api.device_get_compute_mode, [&](json& v) {
    int m = -1;
    const Return rc = api.device_get_compute_mode(d, &m);
    v = compute_mode_name(m);
    return rc;
  });
}

void read_sensors(const Api& api, Device d, DeviceReader& r) {
  r.field("clocks_mhz", api.device_get_clock_info, [&](json& v) {
    unsigned int sm = 0, mem = 0;
    const Return rc_sm = api.device_get_clock_info(d, kClockSm, &sm);
    const Return rc_mem = api.device_get_clock_info(d, kClockMem, &mem);
    v = json{{"sm", rc_sm == kSuccess ? json(sm) : json(nullptr)},
             {"mem", rc_mem == kSuccess ? json(mem) : json(nullptr)}};
    return rc_sm == kSuccess || rc_mem == kSuccess ? kSuccess : rc_sm;
  });
  r.field("temperature_c", api.device_get_temperature, [&](json& v) {
    unsigned int t = 0;
    const Return rc = api.device_get_temperature(d, kTemperatureGpu, &t);
    v = t;
    return rc;
  });
  r.field("power_w", api.device_get_power_usage, [&](json& v) {
    unsigned int mw = 0;
    const Return rc = api.device_get_power_usage(d, &mw);
    v = static_cast<double>(mw) / 1000.0;
    return rc;
  });
  r.field("memory", api.device_get_memory_info, [&](json& v) {
    Memory m{};
    const Return rc = api.device_get_memory_info(d, &m);
    v = json{{"total_bytes", m.total}, {"free_bytes", m.free}, {"used_bytes", m.used}};
    return rc;
  });
}

void read_links(const Api& api, Device d, DeviceReader& r) {
  r.field("nvlink_active_links", api.device_get_nvlink_state, [&](json& v) {
    unsigned int active = 0;
    Return first = kSuccess;
    bool any = false;
    for (unsigned int link = 0; link < kNvlinkMaxLinks; ++link) {
      int is_active = 0;
      const Return rc = api.device_get_nvlink_state(d, link, &is_active);
      if (rc == kSuccess) {
        any = true;
        if (is_active) ++active;
      } else if (first == kSuccess) {
        first = rc;
      }
    }
    v = active;
    return any ? kSuccess : first;
  });
}

// Every pair of GPUs: the PCIe/NUMA path between them and whether NVLink joins them.
json read_topology(const Api& api, const std::vector<Device>& devices) {
  json pairs = json::array();
  for (size_t a = 0; a < devices.size(); ++a) {
    for (size_t b = a + 1; b < devices.size(); ++b) {
      if (!devices[a] || !devices[b]) continue;
      json p{{"a", a}, {"b", b}, {"path", nullptr}, {"nvlink", nullptr}};
      if (api.device_get_topology_common_ancestor) {
        int level = -1;
        if (api.device_get_topology_common_ancestor(devices[a], devices[b], &level) == kSuccess)
          p["path"] = topology_level_name(level);
      }
      if (api.device_get_p2p_status) {
        int status = -1;
        if (api.device_get_p2p_status(devices[a], devices[b], kP2pCapsNvlink, &status) == kSuccess)
          p["nvlink"] = status == kP2pStatusOk;
      }
      pairs.push_back(std::move(p));
    }
  }
  return pairs;
}

json read_device(const Api& api, unsigned int index, Device& d) {
  json dev{{"index", index}};
  d = nullptr;
  const Return rc = api.device_get_handle_by_index_v2(index, &d);
  if (rc != kSuccess) {
    d = nullptr;
    dev["error"] = "nvmlDeviceGetHandleByIndex_v2: " + error_text(api, rc);
    return dev;
  }
  DeviceReader r(api, dev);
  read_identity(api, d, r);
  read_health(api, d, r);
  read_modes(api, d, r);
  read_sensors(api, d, r);
  read_links(api, d, r);
  r.finish();
  return dev;
}

json read_driver(const Api& api) {
  json drv = json::object();
  if (api.system_get_driver_version) {
    char buf[256] = {};
    if (api.system_get_driver_version(buf, 255) == kSuccess) drv["version"] = std::string(buf, ::strnlen(buf, sizeof buf));
  }
  if (api.system_get_cuda_driver_version_v2) {
    int v = 0;
    if (api.system_get_cuda_driver_version_v2(&v) == kSuccess) {
      drv["nvml_cuda_driver_version"] = v;
      drv["nvml_cuda_driver_version_string"] = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
    }
  }
  return drv;
}

}  // namespace

const char* topology_level_name(int level) {
  switch (level) {
    case 0: return "same_board";         // NVML_TOPOLOGY_INTERNAL
    case 10: return "single_switch";     // NVML_TOPOLOGY_SINGLE
    case 20: return "multiple_switches"; // NVML_TOPOLOGY_MULTIPLE
    case 30: return "host_bridge";       // NVML_TOPOLOGY_HOSTBRIDGE
    case 40: return "same_numa_node";    // NVML_TOPOLOGY_NODE
    case 50: return "system";            // NVML_TOPOLOGY_SYSTEM
    default: return "unknown";
  }
}

std::string error_text(const Api& api, Return rc) {
  const char* s = api.error_string ? api.error_string(rc) : nullptr;
  return std::string(s ? s : fallback_error_name(rc)) + " (" + std::to_string(rc) + ")";
}

bool load(Api& api, std::string& reason, const std::string& library) {
  void* lib = open_library(library, reason);
  if (!lib) return false;
  resolve_symbol(lib, "nvmlInit_v2", api.init_v2);
  resolve_symbol(lib, "nvmlShutdown", api.shutdown);
  resolve_symbol(lib, "nvmlErrorString", api.error_string);
  resolve_symbol(lib, "nvmlSystemGetDriverVersion", api.system_get_driver_version);
  resolve_symbol(lib, "nvmlSystemGetCudaDriverVersion_v2", api.system_get_cuda_driver_version_v2);
  resolve_symbol(lib, "nvmlDeviceGetCount_v2", api.device_get_count_v2);
  resolve_symbol(lib, "nvmlDeviceGetHandleByIndex_v2", api.device_get_handle_by_index_v2);
  resolve_symbol(lib, "nvmlDeviceGetName", api.device_get_name);
  resolve_symbol(lib, "nvmlDeviceGetUUID", api.device_get_uuid);
  resolve_symbol(lib, "nvmlDeviceGetSerial", api.device_get_serial);
  resolve_symbol(lib, "nvmlDeviceGetVbiosVersion", api.device_get_vbios_version);
  resolve_symbol(lib, "nvmlDeviceGetPciInfo_v3", api.device_get_pci_info_v3);
  resolve_symbol(lib, "nvmlDeviceGetEccMode", api.device_get_ecc_mode);
  resolve_symbol(lib, "nvmlDeviceGetTotalEccErrors", api.device_get_total_ecc_errors);
  resolve_symbol(lib, "nvmlDeviceGetRetiredPages", api.device_get_retired_pages);
  resolve_symbol(lib, "nvmlDeviceGetRemappedRows", api.device_get_remapped_rows);
  resolve_symbol(lib, "nvmlDeviceGetPersistenceMode", api.device_get_persistence_mode);
  resolve_symbol(lib, "nvmlDeviceGetMigMode", api.device_get_mig_mode);
  resolve_symbol(lib, "nvmlDeviceGetComputeMode", api.device_get_compute_mode);
  resolve_symbol(lib, "nvmlDeviceGetClockInfo", api.device_get_clock_info);
  resolve_symbol(lib, "nvmlDeviceGetTemperature", api.device_get_temperature);
  resolve_symbol(lib, "nvmlDeviceGetPowerUsage", api.device_get_power_usage);
  resolve_symbol(lib, "nvmlDeviceGetMemoryInfo", api.device_get_memory_info);
  resolve_symbol(lib, "nvmlDeviceGetTopologyCommonAncestor", api.device_get_topology_common_ancestor);
  resolve_symbol(lib, "nvmlDeviceGetP2PStatus", api.device_get_p2p_status);
  resolve_symbol(lib, "nvmlDeviceGetNvLinkState", api.device_get_nvlink_state);
  return true;
}

json snapshot(const Api& api) {
  json out{{"nvml", json{{"available", false}}}, {"driver", json::object()}, {"devices", json::array()}};
  if (!api.init_v2 || !api.device_get_count_v2 || !api.device_get_handle_by_index_v2) {
    out["nvml"]["reason"] = "NVML lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2";
    return out;
  }
  const Return rc = api.init_v2();
  if (rc != kSuccess) {
    out["nvml"]["reason"] = "nvmlInit_v2: " + error_text(api, rc);
    return out;
  }
  out["nvml"]["available"] = true;
  out["driver"] = read_driver(api);
  unsigned int count = 0;
  const Return rc_count = api.device_get_count_v2(&count);
  if (rc_count != kSuccess) {
    out["nvml"]["reason"] = "nvmlDeviceGetCount_v2: " + error_text(api, rc_count);
  } else {
    std::vector<Device> handles;
    for (unsigned int i = 0; i < count && i < 256; ++i) {
      Device d = nullptr;
      out["devices"].push_back(read_device(api, i, d));
      handles.push_back(d);
    }
    if (handles.size() > 1) out["topology"] = read_topology(api, handles);
  }
  if (api.shutdown) api.shutdown();
  return out;
}

}  // namespace cudadiag::host::nvml

namespace cudadiag::host {

report::json nvml_snapshot() {
  static std::mutex mu;
  static nvml::Api api;
  static bool loaded = false;
  static std::string reason;
  const std::lock_guard<std::mutex> lock(mu);
  if (!loaded && reason.empty()) {
    loaded = nvml::load(api, reason);
    if (!loaded && reason.empty()) reason = "libnvidia-ml.so.1 could not be loaded";
  }
  if (!loaded) {
    return report::json{{"nvml", report::json{{"available", false}, {"library", "libnvidia-ml.so.1"}, {"reason", reason}}},
                        {"driver", report::json::object()},
                        {"devices", report::json::array()}};
  }
  auto snap = nvml::snapshot(api);
  snap["nvml"]["library"] = "libnvidia-ml.so.1";
  return snap;
}

}  // namespace cudadiag::host

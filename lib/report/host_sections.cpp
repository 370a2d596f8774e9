#include "report/host_sections.h"

#include <algorithm>
#include <limits>

#include "report/json_reader.h"

namespace cudadiag::report {
namespace {

using json = nlohmann::ordered_json;

void put(json& j, const char* key, const std::optional<std::string>& v) {
  if (v) j[key] = *v;
}

json nullable_json(const Nullable<Fields>& v) {
  return *v ? to_json(**v) : json(nullptr);
}

// A member of the typed name and type is taken out; anything else stays among the facts.
bool take_string(const json& v, std::optional<std::string>& out) {
  if (!v.is_string()) return false;
  out = v.get<std::string>();
  return true;
}

// NVML's status as host/host_facts.cpp writes it: {available, library?, reason?, detail?}
// and nothing else; any other shape stays among the facts as it was.
std::optional<NvmlStatus> nvml_status(const json& v) {
  if (!v.is_object() || !v.contains("available") || !v["available"].is_boolean()) return std::nullopt;
  NvmlStatus n;
  for (const auto& [k, m] : v.items()) {
    if (k == "available") n.available = m.get<bool>();
    else if (!((k == "library" && take_string(m, n.library)) || (k == "reason" && take_string(m, n.reason)) ||
               (k == "detail" && take_string(m, n.detail))))
      return std::nullopt;
  }
  return n;
}

// The CUDA driver's status as host/host_facts.cpp writes it: all six members, of their
// types; any other shape stays among the facts.
std::optional<LibcudaStatus> libcuda_status(const json& v) {
  if (!v.is_object() || v.size() != 6) return std::nullopt;
  LibcudaStatus c;
  for (const auto& [k, m] : v.items()) {
    if (k == "available" && m.is_boolean()) {
      c.available = m.get<bool>();
    } else if (k == "status" && m.is_string()) {
      const auto s = parse_choice(kDriverStatuses, m.get_ref<const std::string&>());
      if (!s) return std::nullopt;
      c.status = *s;
    } else if (k == "version" && (m.is_null() || m.is_number_integer())) {
      if (m.is_number_integer()) c.version = m.get<std::int64_t>();
    } else if (!(m.is_string() && (k == "library" || k == "reason" || k == "detail"))) {
      return std::nullopt;
    } else {
      (k == "library" ? c.library : k == "reason" ? c.reason : c.detail) = m.get<std::string>();
    }
  }
  return c;
}

// The job's binding: null, or {source, value} of strings.
std::optional<Nullable<BindingInfo>> binding_info(const json& v) {
  if (v.is_null()) return Nullable<BindingInfo>(std::optional<BindingInfo>());
  if (!v.is_object() || v.size() != 2 || !v.contains("source") || !v["source"].is_string() ||
      !v.contains("value") || !v["value"].is_string())
    return std::nullopt;
  return Nullable<BindingInfo>(BindingInfo{v["source"].get<std::string>(), v["value"].get<std::string>()});
}

}  // namespace

const std::string* Environment::find(std::string_view name) const {
  for (const auto& v : vars)
    if (v.name == name) return &v.value;
  return nullptr;
}

void Environment::set(const std::string& name, const std::string& value) {
  const auto it = std::lower_bound(vars.begin(), vars.end(), name,
                                   [](const EnvVar& v, const std::string& n) { return v.name < n; });
  if (it != vars.end() && it->name == name) it->value = value;
  else vars.insert(it, EnvVar{name, value});
}

json to_json(const HostInfo& h) {
  json j = json::object();
  put(j, "hostname", h.hostname);
  for (const auto& m : h.facts.items()) j[m.name] = to_json(m.value);
  return j;
}

json to_json(const DriverInfo& d) {
  json j = json::object();
  put(j, "version", d.version);
  for (const auto& m : d.facts.items()) j[m.name] = to_json(m.value);
  if (d.nvml) {
    json n{{"available", d.nvml->available}};
    put(n, "library", d.nvml->library);
    put(n, "reason", d.nvml->reason);
    put(n, "detail", d.nvml->detail);
    j["nvml"] = std::move(n);
  }
  if (const auto& c = d.libcuda) {
    j["libcuda"] = json{{"available", c->available},
                        {"library", c->library},
                        {"status", std::string(choice_name(kDriverStatuses, c->status))},
                        {"reason", c->reason},
                        {"detail", c->detail},
                        {"version", c->version ? json(*c->version) : json(nullptr)}};
  }
  if (d.device_binding) {
    const auto& b = *d.device_binding;
    j["device_binding"] = b ? json{{"source", b->source}, {"value", b->value}} : json(nullptr);
  }
  return j;
}

json to_json(const DeviceInfo& d) {
  json j = json::object();
  if (d.index) j["index"] = *d.index;
  put(j, "name", d.name);
  put(j, "uuid", d.uuid);
  put(j, "pci_bus_id", d.pci_bus_id);
  put(j, "serial", d.serial);
  if (d.visible_to_cuda) j["visible_to_cuda"] = *d.visible_to_cuda;
  if (d.cuda) j["cuda"] = nullable_json(d.cuda);
  if (d.nvml) j["nvml"] = nullable_json(d.nvml);
  for (const auto& m : d.facts.items()) j[m.name] = to_json(m.value);
  return j;
}

json to_json(const std::vector<DeviceInfo>& devices) {
  json a = json::array();
  for (const auto& d : devices) a.push_back(to_json(d));
  return a;
}

json to_json(const Environment& e) {
  json j = json::object();
  for (const auto& v : e.vars) j[v.name] = v.value;
  return j;
}

HostInfo read_host(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  HostInfo h;
  for (const auto& [k, v] : j.items()) {
    if (k == "hostname" && !v.is_null()) {
      h.hostname = rd.string(v, JsonReader::member_pointer(p, k));
      continue;
    }
    h.facts.set(k, value_from_json(v));
  }
  return h;
}

DriverInfo read_driver(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  DriverInfo d;
  for (const auto& [k, v] : j.items()) {
    if (k == "version" && take_string(v, d.version)) continue;
    if (k == "nvml" && (d.nvml = nvml_status(v))) continue;
    if (k == "libcuda" && (d.libcuda = libcuda_status(v))) continue;
    if (k == "device_binding") {
      if (auto b = binding_info(v)) {
        d.device_binding = std::move(*b);
        continue;
      }
    }
    d.facts.set(k, value_from_json(v));
  }
  return d;
}

DeviceInfo read_device(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  DeviceInfo d;
  for (const auto& [k, v] : j.items()) {
    const std::string mp = JsonReader::member_pointer(p, k);
    if (k == "index") {
      d.index = rd.integer(v, mp, std::numeric_limits<long long>::min(), std::numeric_limits<long long>::max());
    } else if (k == "name" && !v.is_null()) {
      d.name = rd.string(v, mp);
    } else if (k == "uuid" && !v.is_null()) {
      d.uuid = rd.string(v, mp);
    } else if (k == "pci_bus_id" && take_string(v, d.pci_bus_id)) {
    } else if (k == "serial" && take_string(v, d.serial)) {
    } else if (k == "visible_to_cuda" && v.is_boolean()) {
      d.visible_to_cuda = v.get<bool>();
    } else if ((k == "cuda" || k == "nvml") && (v.is_null() || v.is_object())) {
      (k == "cuda" ? d.cuda : d.nvml) = v.is_null() ? std::optional<Fields>() : std::optional<Fields>(fields_from_json(v));
    } else {
      d.facts.set(k, value_from_json(v));
    }
  }
  return d;
}

std::vector<DeviceInfo> read_devices(const JsonReader& rd, const json& j, const std::string& p) {
  rd.array(j, p);
  std::vector<DeviceInfo> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(read_device(rd, j[i], JsonReader::element_pointer(p, i)));
  return out;
}

Environment read_environment(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  Environment e;
  for (const auto& [k, v] : j.items()) e.vars.push_back({k, rd.string(v, JsonReader::member_pointer(p, k))});
  return e;
}

HostInfo host_info_from_json(const json& j, const std::string& source) { return read_host(JsonReader(source), j, ""); }

DriverInfo driver_info_from_json(const json& j, const std::string& source) {
  return read_driver(JsonReader(source), j, "");
}

std::vector<DeviceInfo> devices_from_json(const json& j, const std::string& source) {
  return read_devices(JsonReader(source), j, "");
}

}  // namespace cudadiag::report

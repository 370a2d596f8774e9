#include "compare/env_fields.h"

#include <algorithm>
#include <set>

namespace cudadiag::compare {

const std::vector<EnvField>& env_fields() {
  // Weights rank suspects: what the driver and the GPU's health say comes before what
  // the host OS says, which comes before the tool's own bookkeeping.
  static const std::vector<EnvField> fields = {
      // driver: lib/host/nvml.cpp (read_driver) and lib/host/cuda_probe.cpp (version_fields)
      {"driver version", "driver", 90, false, false, {"/driver/version", "/driver/driver_version"}},
      {"CUDA driver API", "cuda", 85, false, false,
       {"/driver/cuda_driver_version_string", "/driver/nvml_cuda_driver_version_string",
        "/driver/cuda_driver_version"}},
      {"CUDA runtime", "cuda", 60, false, false,
       {"/driver/cuda_runtime_version_loaded_string", "/driver/cuda_runtime_version_loaded",
        "/driver/runtime_version"}},
      // tool and invocation: lib/report/report.cpp (new_report); suite: extra["suite"]
      {"CUDA toolkit (build)", "tool", 55, false, false, {"/tool/cuda_toolkit"}},
      {"tool version", "tool", 50, false, false, {"/tool/version"}},
      {"git revision", "tool", 50, false, false, {"/tool/git_revision"}},
      {"command", "suite", 50, false, false, {"/invocation/command"}},
      {"suite", "suite", 50, false, false, {"/suite/name"}},
      // host: lib/host/system_info.cpp
      {"kernel", "os", 40, false, false, {"/host/kernel/release", "/host/kernel"}},
      {"OS", "os", 30, false, false, {"/host/os", "/host/os_pretty_name"}},
      {"glibc", "os", 35, false, false, {"/host/glibc", "/host/glibc_version"}},
      {"CPU", "os", 20, false, false, {"/host/cpu/model", "/host/cpu_model"}},
      // devices[i]: lib/host/devices.cpp (merge_devices: name, cuda:{...}, nvml:{...})
      {"model", "gpu", 75, true, false, {"/name", "/nvml/name", "/cuda/name"}},
      {"compute capability", "gpu", 75, true, false, {"/cuda/compute_capability", "/compute_capability"}},
      {"SMs", "gpu", 60, true, false, {"/cuda/multiprocessors"}},
      {"memory", "gpu", 30, true, false, {"/nvml/memory/total_bytes", "/cuda/total_memory_bytes"}},
      {"VBIOS", "gpu", 80, true, false, {"/nvml/vbios", "/vbios"}},
      {"ECC mode", "health", 80, true, false,
       {"/nvml/ecc_mode/current", "/cuda/ecc_enabled", "/ecc_mode"}},
      {"ECC errors", "health", 95, true, true, {"/nvml/ecc_errors", "/ecc_errors"}},
      {"retired pages", "health", 95, true, true, {"/nvml/retired_pages", "/retired_pages"}},
      {"remapped rows", "health", 95, true, true, {"/nvml/remapped_rows", "/remapped_rows"}},
      {"MIG mode", "mode", 70, true, false, {"/nvml/mig_mode/current", "/mig_mode"}},
      {"compute mode", "mode", 70, true, false, {"/nvml/compute_mode", "/cuda/compute_mode"}},
      {"persistence mode", "mode", 40, true, false, {"/nvml/persistence_mode"}},
  };
  return fields;
}

namespace {

// Objects (ECC counters, retired pages, remapped rows) as their non-zero leaves,
// "volatile.uncorrected=2, aggregate.uncorrected=2", or "0" when every leaf is zero:
// short enough for a table cell, and equal text exactly when the facts agree.
void flatten_nonzero(const report::json& v, const std::string& prefix, std::string& out) {
  if (v.is_object()) {
    for (const auto& [k, sub] : v.items()) flatten_nonzero(sub, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  const bool zero = v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
                    (v.is_number() && v.get<double>() == 0.0) || (v.is_string() && v.get<std::string>().empty());
  if (zero) return;
  if (!out.empty()) out += ", ";
  out += prefix.empty() ? "" : prefix + "=";
  out += v.is_string() ? v.get<std::string>() : v.dump();
}

std::string value_text(const report::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_object()) return v.dump();
  std::string out;
  flatten_nonzero(v, "", out);
  return out.empty() ? "0" : out;
}

}  // namespace

std::optional<std::string> lookup_text(const report::json& doc, const std::vector<std::string>& pointers,
                                       const report::json** found) {
  for (const auto& p : pointers) {
    const report::json::json_pointer ptr(p);
    if (!doc.contains(ptr)) continue;
    const auto& v = doc.at(ptr);
    if (v.is_null()) continue;
    if (found) *found = &v;
    return value_text(v);
  }
  return std::nullopt;
}

double numeric_total(const report::json& value) {
  if (value.is_number()) return value.get<double>();
  double total = 0.0;
  if (value.is_structured())
    for (const auto& v : value) total += numeric_total(v);
  return total;
}

namespace {

EnvRow make_row(const EnvField& f, std::string name, std::string device, std::size_t n) {
  EnvRow row;
  row.field = std::move(name);
  row.category = f.category;
  row.device = std::move(device);
  row.weight = f.weight;
  row.health_counter = f.health_counter;
  row.values.assign(n, std::nullopt);
  row.counter_totals.assign(n, 0.0);
  return row;
}

void finish_row(EnvRow& row, std::vector<EnvRow>& out) {
  std::set<std::string> distinct;
  bool any = false;
  for (const auto& v : row.values) {
    if (!v) continue;
    any = true;
    distinct.insert(*v);
  }
  if (!any) return;
  row.differs = distinct.size() > 1;
  out.push_back(std::move(row));
}

void add_report_field(const EnvField& f, const std::vector<report::json>& docs,
                      std::vector<EnvRow>& out) {
  auto row = make_row(f, f.label, "", docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const report::json* v = nullptr;
    row.values[i] = lookup_text(docs[i], f.pointers, &v);
  }
  finish_row(row, out);
}

void add_device_field(const EnvField& f, const std::vector<report::json>& docs, std::size_t device,
                      std::vector<EnvRow>& out) {
  const std::string pos = "gpu" + std::to_string(device);
  auto row = make_row(f, pos + " " + f.label, pos, docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto& devs = docs[i]["devices"];
    if (!devs.is_array() || device >= devs.size() || !devs[device].is_object()) continue;
    const report::json* v = nullptr;
    row.values[i] = lookup_text(devs[device], f.pointers, &v);
    if (v && f.health_counter) row.counter_totals[i] = numeric_total(*v);
  }
  finish_row(row, out);
}

void add_device_count(const std::vector<report::json>& docs, std::vector<EnvRow>& out) {
  EnvField f{"devices", "gpu", 70, false, false, {}};
  auto row = make_row(f, "devices", "", docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i)
    row.values[i] = std::to_string(docs[i]["devices"].is_array() ? docs[i]["devices"].size() : 0);
  finish_row(row, out);
}

// A variable set on one host and unset on another is a difference too.
void add_environment_variables(const std::vector<report::json>& docs, std::vector<EnvRow>& out) {
  std::set<std::string> names;
  for (const auto& d : docs)
    if (d["environment"].is_object())
      for (const auto& [k, v] : d["environment"].items()) names.insert(k);
  const EnvField f{"", "environment", kEnvVarWeight, false, false, {}};
  for (const auto& name : names) {
    auto row = make_row(f, "env " + name, "", docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const auto& env = docs[i]["environment"];
      const bool set = env.is_object() && env.contains(name) && !env[name].is_null();
      row.values[i] = set ? (env[name].is_string() ? env[name].get<std::string>() : env[name].dump())
                          : std::string("(unset)");
    }
    finish_row(row, out);
  }
}

}  // namespace

std::vector<EnvRow> environment_rows(const std::vector<LoadedReport>& reports) {
  std::vector<report::json> docs;
  std::size_t max_devices = 0;
  for (const auto& r : reports) {
    docs.push_back(report::to_json(r.report));
    max_devices = std::max(max_devices, r.report.devices.is_array() ? r.report.devices.size() : 0);
  }
  std::vector<EnvRow> out;
  for (const auto& f : env_fields())
    if (!f.per_device) add_report_field(f, docs, out);
  add_device_count(docs, out);
  for (std::size_t d = 0; d < max_devices; ++d)
    for (const auto& f : env_fields())
      if (f.per_device) add_device_field(f, docs, d, out);
  add_environment_variables(docs, out);
  return out;
}

}  // namespace cudadiag::compare

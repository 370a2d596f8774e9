#include "compare/env_fields.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "compare/digest.h"

namespace cudadiag::compare {

const std::vector<EnvField>& env_fields() {
  // Weights rank suspects: what the driver and the GPU's health say comes before what
  // the host OS says, which comes before the tool's own bookkeeping.
  static const std::vector<EnvField> fields = {
      // driver: lib/host/nvml.cpp (read_driver) and lib/host/cuda_probe.cpp (version_fields)
      {"driver version", "driver", 90, false, false, {"/driver/version", "/driver/driver_version"}, FieldKind::text,
       FieldRole::driver_version},
      {"CUDA driver API", "cuda", 85, false, false,
       {"/driver/cuda_driver_version_string", "/driver/nvml_cuda_driver_version_string",
        "/driver/cuda_driver_version"},
       FieldKind::scalar},
      {"CUDA runtime", "cuda", 60, false, false,
       {"/driver/cuda_runtime_version_loaded_string", "/driver/cuda_runtime_version_loaded",
        "/driver/runtime_version"},
       FieldKind::scalar},
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
      {"model", "gpu", 75, true, false, {"/name", "/nvml/name", "/cuda/name"}, FieldKind::text, FieldRole::gpu_model},
      {"compute capability", "gpu", 75, true, false, {"/cuda/compute_capability", "/compute_capability"},
       FieldKind::scalar},
      {"SMs", "gpu", 60, true, false, {"/cuda/multiprocessors"}, FieldKind::scalar},
      {"memory", "gpu", 30, true, false, {"/nvml/memory/total_bytes", "/cuda/total_memory_bytes"}, FieldKind::scalar},
      {"VBIOS", "gpu", 80, true, false, {"/nvml/vbios", "/vbios"}},
      {"ECC mode", "health", 80, true, false,
       {"/nvml/ecc_mode/current", "/cuda/ecc_enabled", "/ecc_mode"}, FieldKind::scalar},
      {"ECC errors", "health", 95, true, true, {"/nvml/ecc_errors", "/ecc_errors"}, FieldKind::counter},
      {"retired pages", "health", 95, true, true, {"/nvml/retired_pages", "/retired_pages"}, FieldKind::counter},
      {"remapped rows", "health", 95, true, true, {"/nvml/remapped_rows", "/remapped_rows"}, FieldKind::counter},
      {"MIG mode", "mode", 70, true, false, {"/nvml/mig_mode/current", "/mig_mode"}, FieldKind::scalar},
      {"compute mode", "mode", 70, true, false, {"/nvml/compute_mode", "/cuda/compute_mode"}, FieldKind::scalar},
      {"persistence mode", "mode", 40, true, false, {"/nvml/persistence_mode"}, FieldKind::scalar},
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

std::uint32_t EnvRowTable::id(const EnvRowSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = by_field_.find(spec.field);
  if (it != by_field_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(specs_.size());
  specs_.push_back(spec);
  by_field_.emplace(spec.field, id);
  return id;
}

const EnvRowSpec& EnvRowTable::spec(std::uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return specs_.at(id);
}

std::vector<std::uint32_t> EnvRowTable::ordered() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::uint32_t> ids(specs_.size());
  for (std::uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto &x = specs_[a], &y = specs_[b];
    return std::tie(x.section, x.device_position, x.field_order, x.field) <
           std::tie(y.section, y.device_position, y.field_order, y.field);
  });
  return ids;
}

namespace {

enum EnvSection { kReportFields = 0, kDeviceCount = 1, kPerDevice = 2, kVariables = 3 };

EnvRowSpec spec_of(const EnvField& f, std::string name, std::string device, int section,
                   std::size_t device_position, std::size_t order) {
  EnvRowSpec s;
  s.field = std::move(name);
  s.category = f.category;
  s.device = std::move(device);
  s.weight = f.weight;
  s.health_counter = f.health_counter;
  s.section = section;
  s.device_position = device_position;
  s.field_order = order;
  return s;
}

class FactCollector {
 public:
  FactCollector(EnvRowTable& rows, StringPool& strings) : rows_(rows), strings_(strings) {}

  void add(const EnvRowSpec& spec, const std::string& value, double counter_total = 0.0) {
    facts_.push_back({rows_.id(spec), strings_.intern(value), counter_total});
  }
  std::vector<EnvFact> take() {
    std::sort(facts_.begin(), facts_.end(), [](const EnvFact& a, const EnvFact& b) { return a.row < b.row; });
    return std::move(facts_);
  }

 private:
  EnvRowTable& rows_;
  StringPool& strings_;
  std::vector<EnvFact> facts_;
};

// A variable set on one host and unset on another is a difference too: rows of
// variables read "(unset)" for reports that lack them (environment_rows).
void add_variables(const report::json& head, FactCollector& out) {
  if (!head.contains("environment") || !head["environment"].is_object()) return;
  const EnvField f{"", "environment", kEnvVarWeight, false, false, {}};
  for (const auto& [name, v] : head["environment"].items()) {
    if (v.is_null()) continue;
    auto spec = spec_of(f, "env " + name, "", kVariables, 0, 0);
    spec.variable = true;
    out.add(spec, v.is_string() ? v.get<std::string>() : v.dump());
  }
}

}  // namespace

std::vector<EnvFact> environment_facts(const report::json& head, const std::vector<std::size_t>& devices_used,
                                       EnvRowTable& rows, StringPool& strings) {
  FactCollector out(rows, strings);
  const auto& fields = env_fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].per_device) continue;
    if (const auto v = lookup_text(head, fields[i].pointers))
      out.add(spec_of(fields[i], fields[i].label, "", kReportFields, 0, i), *v);
  }
  const bool has_devices = head.contains("devices") && head["devices"].is_array();
  const report::json no_devices = report::json::array();
  const auto& devices = has_devices ? head["devices"] : no_devices;
  const EnvField count_field{"devices", "gpu", 70, false, false, {}};
  out.add(spec_of(count_field, "devices", "", kDeviceCount, 0, 0), std::to_string(devices.size()));
  for (std::size_t pos = 0; pos < devices_used.size(); ++pos) {
    const std::size_t d = devices_used[pos];
    if (d >= devices.size() || !devices[d].is_object()) continue;
    const std::string name = "gpu" + std::to_string(pos);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const auto& f = fields[i];
      if (!f.per_device) continue;
      const report::json* v = nullptr;
      const auto text = lookup_text(devices[d], f.pointers, &v);
      if (!text) continue;
      out.add(spec_of(f, name + " " + f.label, name, kPerDevice, pos, i), *text,
              v && f.health_counter ? numeric_total(*v) : 0.0);
    }
  }
  add_variables(head, out);
  return out.take();
}

std::vector<EnvRow> environment_rows(const std::vector<ReportDigest>& reports, const EnvRowTable& table,
                                     StringPool& strings) {
  const auto order = table.ordered();
  std::vector<std::size_t> slot(order.size());
  std::vector<EnvRow> rows;
  rows.reserve(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& spec = table.spec(order[k]);
    slot[order[k]] = k;
    EnvRow row;
    static_cast<EnvRowInfo&>(row) = spec;
    row.values.assign(reports.size(), nullptr);
    if (spec.health_counter) row.counter_totals.assign(reports.size(), 0.0);
    rows.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    for (const auto& fact : reports[i].environment) {
      auto& row = rows[slot[fact.row]];
      row.values[i] = fact.value;
      if (row.health_counter) row.counter_totals[i] = fact.counter_total;
    }
  }
  // Variables: absent means unset, itself a value.
  const Text unset = strings.intern("(unset)");
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (!table.spec(order[k]).variable) continue;
    for (auto& v : rows[k].values)
      if (!v) v = unset;
  }
  for (auto& row : rows) {
    Text first = nullptr;
    for (const auto v : row.values) {
      if (!v) continue;
      if (!first) first = v;
      if (v != first) row.differs = true;  // interned: another address is another value
    }
  }
  return rows;
}

}  // namespace cudadiag::compare

#include "compare/pairing.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

namespace cudadiag::compare {

std::string PairKey::id() const {
  return case_id + '\x1f' + params + '\x1f' + profile + '\x1f' + device + '\x1f' +
         std::to_string(occurrence);
}

std::string PairKey::label() const {
  std::string s = case_id + " [" + profile + "]";
  if (!host_only) s += " @" + device;
  if (occurrence > 1) s += " #" + std::to_string(occurrence);
  return s;
}

std::string canonical_params(const report::json& params) { return canonical_params_text(params.dump()); }

std::string canonical_params_text(std::string_view raw) {
  // nlohmann::json (unlike ordered_json) keeps object keys sorted.
  return nlohmann::json::parse(raw).dump();
}

std::optional<std::size_t> device_index_of(std::string_view device, int device_index, const report::json& devices) {
  if (device_index >= 0) return static_cast<std::size_t>(device_index);
  if (!report::parse_device(std::string(device)).is_gpu() || !devices.is_array()) return std::nullopt;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    if (!d.is_object() || !d.contains("uuid") || !d["uuid"].is_string() || d["uuid"].get<std::string>() != device)
      continue;
    if (d.contains("index") && d["index"].is_number_unsigned()) return d["index"].get<std::size_t>();
    return i;
  }
  return std::nullopt;
}

std::string device_position(const report::Result& r, const report::json& devices) {
  if (const auto i = device_index_of(r.device.is_gpu() ? r.device.uuid : std::string(), r.device_index, devices))
    return "gpu" + std::to_string(*i);
  return r.device.is_gpu() ? "gpu?" : "host";
}

std::size_t PairedCase::present() const {
  std::size_t n = 0;
  for (const auto* r : per_report) n += r != nullptr;
  return n;
}

std::size_t Pairing::unpaired_results() const {
  std::size_t n = 0;
  for (const auto& u : unpaired) n += u.present_in.size();
  return n;
}

namespace {

// A key by identity of its interned parts: cheap to hash for hundreds of thousands of results.
struct KeyId {
  Text case_id, params, profile, device;
  int occurrence;
  bool operator==(const KeyId& o) const {
    return case_id == o.case_id && params == o.params && profile == o.profile && device == o.device &&
           occurrence == o.occurrence;
  }
};

struct KeyIdHash {
  std::size_t operator()(const KeyId& k) const {
    std::size_t h = std::hash<const void*>{}(k.case_id);
    for (const void* p : {static_cast<const void*>(k.params), static_cast<const void*>(k.profile),
                          static_cast<const void*>(k.device)})
      h = h * 1000003u ^ std::hash<const void*>{}(p);
    return h * 31u + static_cast<std::size_t>(k.occurrence);
  }
};

std::string loose_id(const PairKey& k) {  // everything but the parameters
  return k.case_id + '\x1f' + k.profile + '\x1f' + k.device;
}

}  // namespace

Pairing pair_results(const std::vector<ReportDigest>& reports) {
  const std::size_t n = reports.size();
  std::unordered_map<KeyId, std::size_t, KeyIdHash> slot;
  std::vector<PairedCase> cases;
  for (std::size_t ri = 0; ri < n; ++ri) {
    std::unordered_map<KeyId, int, KeyIdHash> seen;
    for (const auto& res : reports[ri].results) {
      KeyId id{res.case_id, res.params, res.profile, res.device, 0};
      id.occurrence = ++seen[id];
      auto [it, inserted] = slot.emplace(id, cases.size());
      if (inserted) {
        PairedCase pc;
        pc.key = PairKey{*res.case_id, *res.params, *res.profile, *res.device, id.occurrence, res.host_only};
        pc.per_report.assign(n, nullptr);
        cases.push_back(std::move(pc));
      }
      cases[it->second].per_report[ri] = &res;
    }
  }
  std::vector<std::pair<std::string, std::size_t>> order;
  for (std::size_t i = 0; i < cases.size(); ++i) order.emplace_back(cases[i].key.id(), i);
  std::sort(order.begin(), order.end());

  Pairing out;
  for (const auto& [id, i] : order) out.cases.push_back(std::move(cases[i]));
  // Loose keys tell "not run there" apart from "run there with other parameters".
  std::map<std::string, std::vector<bool>> loose_presence;
  for (const auto& pc : out.cases) {
    auto& lp = loose_presence[loose_id(pc.key)];
    lp.resize(n, false);
    for (std::size_t ri = 0; ri < n; ++ri) lp[ri] = lp[ri] || pc.per_report[ri] != nullptr;
  }
  for (const auto& pc : out.cases) {
    UnpairedCase u;
    u.key = pc.key;
    for (std::size_t ri = 0; ri < n; ++ri) (pc.per_report[ri] ? u.present_in : u.missing_in).push_back(ri);
    if (u.missing_in.empty()) continue;
    const auto& lp = loose_presence[loose_id(pc.key)];
    const bool other_params = std::any_of(u.missing_in.begin(), u.missing_in.end(), [&](std::size_t ri) { return lp[ri]; });
    u.hint = other_params ? "the same case and profile ran there with other parameters" : "not run there";
    out.unpaired.push_back(std::move(u));
  }
  return out;
}

}  // namespace cudadiag::compare

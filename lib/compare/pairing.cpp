#include "compare/pairing.h"

#include <algorithm>
#include <map>

namespace cudadiag::compare {

std::string PairKey::id() const {
  return case_id + '\x1f' + params + '\x1f' + profile + '\x1f' + device + '\x1f' +
         std::to_string(occurrence);
}

std::string PairKey::label() const {
  std::string s = case_id + " [" + profile + "]";
  if (device != "host") s += " @" + device;
  if (occurrence > 1) s += " #" + std::to_string(occurrence);
  return s;
}

std::string canonical_params(const report::json& params) {
  // nlohmann::json (unlike ordered_json) keeps object keys sorted.
  return nlohmann::json::parse(params.dump()).dump();
}

std::string device_position(const report::Result& r, const report::json& devices) {
  if (r.device_index >= 0) return "gpu" + std::to_string(r.device_index);
  if (r.device == "host") return "host";
  if (!r.device.empty() && devices.is_array()) {
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const auto& d = devices[i];
      if (d.is_object() && d.value("uuid", "") == r.device) {
        return "gpu" + std::to_string(d.contains("index") && d["index"].is_number_integer()
                                          ? d["index"].get<int>()
                                          : static_cast<int>(i));
      }
    }
  }
  return r.device.empty() ? "host" : "gpu?";
}

std::size_t PairedCase::present() const {
  std::size_t n = 0;
  for (const auto* r : per_report) n += r != nullptr;
  return n;
}

namespace {

std::string loose_id(const PairKey& k) {  // everything but the parameters
  return k.case_id + '\x1f' + k.profile + '\x1f' + k.device;
}

}  // namespace

Pairing pair_results(const std::vector<LoadedReport>& reports) {
  const std::size_t n = reports.size();
  std::map<std::string, PairedCase> by_id;
  for (std::size_t ri = 0; ri < n; ++ri) {
    std::map<std::string, int> seen;
    for (const auto& res : reports[ri].report.results) {
      PairKey key{res.case_id, canonical_params(res.params), res.profile,
                  device_position(res, reports[ri].report.devices), 1};
      key.occurrence = ++seen[key.id()];
      auto& pc = by_id[key.id()];
      if (pc.per_report.empty()) {
        pc.key = key;
        pc.per_report.assign(n, nullptr);
      }
      pc.per_report[ri] = &res;
    }
  }

  Pairing out;
  // Loose keys tell "not run there" apart from "run there with other parameters".
  std::map<std::string, std::vector<bool>> loose_presence;
  for (auto& [id, pc] : by_id) {
    auto& lp = loose_presence[loose_id(pc.key)];
    lp.resize(n, false);
    for (std::size_t ri = 0; ri < n; ++ri) lp[ri] = lp[ri] || pc.per_report[ri] != nullptr;
  }
  for (auto& [id, pc] : by_id) {
    std::vector<std::size_t> missing;
    for (std::size_t ri = 0; ri < n; ++ri)
      if (!pc.per_report[ri]) missing.push_back(ri);
    if (!missing.empty()) {
      bool other_params = false;
      for (auto ri : missing) other_params = other_params || loose_presence[loose_id(pc.key)][ri];
      for (std::size_t ri = 0; ri < n; ++ri) {
        if (!pc.per_report[ri]) continue;
        out.unpaired.push_back(
            {ri, pc.key, missing,
             other_params ? "the same case and profile ran there with other parameters"
                          : "not run there"});
      }
    }
    out.cases.push_back(std::move(pc));
  }
  std::stable_sort(out.unpaired.begin(), out.unpaired.end(),
                   [](const UnpairedResult& a, const UnpairedResult& b) { return a.report < b.report; });
  return out;
}

}  // namespace cudadiag::compare

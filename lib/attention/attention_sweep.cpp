#include "attention/attention_sweep.h"

#include "util/text_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "kernels/attention/attention_layout.h"

namespace cudadiag::attention {
namespace ak = cudadiag::attention;

std::vector<TileConfig> plan_sweep(const std::string& filter) {
  std::vector<int> bms(ak::kBlockMs.begin(), ak::kBlockMs.end());
  std::vector<int> bns(ak::kBlockNs.begin(), ak::kBlockNs.end());
  std::vector<int> ws(ak::kWarpCounts.begin(), ak::kWarpCounts.end());
  std::stringstream clauses(filter);
  std::string clause;
  while (std::getline(clauses, clause, ';')) {
    if (clause.find_first_not_of(' ') == std::string::npos) continue;
    const auto eq = clause.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("sweep filter: '" + clause + "' is not KEY=V1,V2 (keys block_m, block_n, warps)");
    std::string key = clause.substr(0, eq);
    key.erase(0, key.find_first_not_of(' '));
    key.erase(key.find_last_not_of(' ') + 1);
    std::vector<int>* target = nullptr;
    std::vector<int> allowed;
    if (key == "block_m") target = &bms, allowed.assign(ak::kBlockMs.begin(), ak::kBlockMs.end());
    else if (key == "block_n") target = &bns, allowed.assign(ak::kBlockNs.begin(), ak::kBlockNs.end());
    else if (key == "warps") target = &ws, allowed.assign(ak::kWarpCounts.begin(), ak::kWarpCounts.end());
    else throw std::invalid_argument("sweep filter: unknown key '" + key + "' (block_m, block_n, warps)");
    std::vector<int> chosen;
    std::stringstream values(clause.substr(eq + 1));
    std::string v;
    while (std::getline(values, v, ',')) {
      size_t used = 0;
      int x = 0;
      try {
        x = std::stoi(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || v.find_first_not_of(" 0123456789") != std::string::npos)
        throw std::invalid_argument("sweep filter: " + key + " value '" + v + "' is not an integer");
      if (std::find(allowed.begin(), allowed.end(), x) == allowed.end())
        throw std::invalid_argument("sweep filter: " + key + "=" + std::to_string(x) + " is not compiled");
      chosen.push_back(x);
    }
    if (chosen.empty()) throw std::invalid_argument("sweep filter: " + key + " has no values");
    *target = chosen;
  }
  std::vector<TileConfig> out;
  for (int m : bms)
    for (int n : bns)
      for (int w : ws) out.push_back({m, n, w});
  return out;
}

json sweep_rows(const std::vector<report::Result>& results) {
  json rows = json::array();
  for (const auto& r : results) {
    json row{{"block_m", r.params.int_or("block_m", 0)},
             {"block_n", r.params.int_or("block_n", 0)},
             {"warps", r.params.int_or("warps", 0)},
             {"outcome", report::to_string(r.outcome)}};
    row["failure_rate"] = r.repeats ? json(r.repeats->failure_rate) : json(nullptr);
    const report::Value* err = r.details.find("max_rel_err");
    row["max_rel_err"] = err ? report::to_json(*err) : json(nullptr);
    row["time_ms"] = r.duration_ms;
    row["reason"] = r.reason;
    if (r.error) row["reason"] = r.error->name;
    rows.push_back(row);
  }
  return rows;
}

namespace {

// A number with `digits` after the point, in fixed or scientific notation; "-" when absent.
std::string number(const json& v, int digits, bool scientific = false) {
  if (!v.is_number()) return "-";
  return scientific ? fmt::format("{:.{}e}", v.get<double>(), digits) : fmt::format("{:.{}f}", v.get<double>(), digits);
}

}  // namespace

std::string render_sweep_table(const json& rows, bool markdown) {
  const std::vector<std::string> head = {"block_m", "block_n", "warps", "outcome", "fail_rate", "max_rel_err", "time_ms", "note"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows)
    cells.push_back({std::to_string(r.value("block_m", 0)), std::to_string(r.value("block_n", 0)),
                     std::to_string(r.value("warps", 0)), r.value("outcome", ""),
                     number(r.value("failure_rate", json(nullptr)), 3),
                     number(r.value("max_rel_err", json(nullptr)), 2, true),
                     number(r.value("time_ms", json(nullptr)), 1), r.value("reason", "")});
  std::ostringstream out;
  if (markdown) {
    auto line = [&](const std::vector<std::string>& c) {
      out << "|";
      for (const auto& x : c) out << " " << x << " |";
      out << "\n";
    };
    line(head);
    out << "|";
    for (size_t i = 0; i < head.size(); ++i) out << (i < 3 ? "---:|" : "---|");
    out << "\n";
    for (const auto& c : cells) line(c);
    return out.str();
  }
  // A reason shared by many rows (the GPU part could not run) is said once, under the
  // table, and the rows point to it: [1], [2], ...
  std::vector<std::string> notes;
  for (auto& c : cells) {
    std::string& note = c.back();
    if (note.empty()) continue;
    auto at = std::find(notes.begin(), notes.end(), note);
    if (at == notes.end()) at = notes.insert(notes.end(), note);
    note = "[" + std::to_string(at - notes.begin() + 1) + "]";
  }
  std::vector<size_t> width(head.size());
  for (size_t i = 0; i < head.size(); ++i) width[i] = text::display_width(head[i]);
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], text::display_width(c[i]));
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) s += (i ? "  " : "") + text::pad_right(c[i], width[i]);
    s.erase(s.find_last_not_of(' ') + 1);
    out << s << "\n";
  };
  line(head);
  for (const auto& c : cells) line(c);
  for (size_t i = 0; i < notes.size(); ++i) out << text::hanging("[" + std::to_string(i + 1) + "] ", notes[i]);
  return out.str();
}

report::Verdict attention_verdict(const std::vector<report::Result>& results, const report::GpuStatus& gpu) {
  report::Verdict v;
  bool all_met = true;
  for (const auto& r : results) {
    if (r.expectation_met != false) continue;
    all_met = false;
    v.reasons.push_back(r.case_id + ": " + std::string(report::to_string(r.outcome)) +
                        (r.reason.empty() ? "" : " (" + r.reason + ")") + ", expected " + r.expected);
  }
  // The GPU part was wanted when any configuration got past the host checks.
  const bool wanted = std::any_of(results.begin(), results.end(), [](const report::Result& r) {
    return r.outcome != report::Outcome::invalid_config || !r.device.is_host();
  });
  const bool gpu_ran = gpu.ran;
  v.status = !all_met               ? report::VerdictStatus::findings
             : gpu_ran || !wanted   ? report::VerdictStatus::ok
                                    : report::VerdictStatus::no_gpu;
  if (wanted && !gpu_ran) v.reasons.push_back("the GPU part could not run: " + gpu.reason.value_or(""));
  return v;
}

}  // namespace cudadiag::attention

#pragma once
// Paths of the synthetic reports in tests/fixtures/compare (see make_fixtures.py there).
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/digest_reader.h"
#include "util/atomic_file.h"

namespace compare_test {

inline std::string fixture(const std::string& name) {
  return std::string(CUDADIAG_SOURCE_DIR) + "/tests/fixtures/compare/" + name;
}

inline std::vector<cudadiag::compare::LoadedReport> load_fixtures(const std::vector<std::string>& names) {
  std::vector<cudadiag::compare::LoadedReport> out;
  for (const auto& n : names) out.push_back(cudadiag::compare::load_report_file(fixture(n)));
  return out;
}

inline cudadiag::compare::Comparison compare_fixtures(
    std::vector<cudadiag::compare::LoadedReport>& reports,
    const cudadiag::compare::CompareOptions& options = {}) {
  return cudadiag::compare::compare_reports(reports, options);
}

// The analysis of the paired case `id` (the first one with that case id).
inline const cudadiag::compare::CaseAnalysis& find_case(const cudadiag::compare::Comparison& c, const std::string& id) {
  for (const auto& cs : c.outcomes.cases)
    if (cs.key.case_id == id) return cs;
  throw std::runtime_error("case not paired: " + id);
}

// A fleet made of copies of one fixture: copy i is host node<i> (zero-padded to three
// digits) in node<i>.json, changed by `change` before it is read.
inline cudadiag::compare::ReportSet fleet_of(
    const std::string& name, std::size_t n,
    const std::function<void(std::size_t, cudadiag::report::json&)>& change = {}) {
  const auto base = cudadiag::report::json::parse(cudadiag::read_file_or_stdin(fixture(name)));
  cudadiag::compare::ReportSet set;
  for (std::size_t i = 0; i < n; ++i) {
    auto doc = base;
    char host[32];
    std::snprintf(host, sizeof host, "node%03zu", i);
    doc["host"]["hostname"] = host;
    if (change) change(i, doc);
    set.reports.push_back(cudadiag::compare::read_digest(doc.dump(), std::string(host) + ".json", *set.tables));
  }
  return set;
}

// The result of `case_id` under `profile` in a report document.
inline cudadiag::report::json& result_of(cudadiag::report::json& doc, const std::string& case_id,
                                         const std::string& profile = "default") {
  for (auto& r : doc["results"])
    if (r["case_id"] == case_id && r["profile"] == profile) return r;
  throw std::runtime_error("no result " + case_id + " [" + profile + "]");
}

}  // namespace compare_test

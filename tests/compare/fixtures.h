#pragma once
// Paths of the synthetic reports in tests/fixtures/compare (see make_fixtures.py there).
#include <string>
#include <vector>

#include "compare/compare.h"

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

}  // namespace compare_test

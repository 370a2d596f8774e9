#include "compare/host_list.h"

namespace cudadiag::compare {

std::string example_names(const std::vector<std::size_t>& idx, const std::vector<std::string>& labels,
                          std::size_t limit) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < idx.size() && k < limit; ++k) names.push_back(labels[idx[k]]);
  std::string s = join(names, ", ");
  if (idx.size() > limit) s += " and " + std::to_string(idx.size() - limit) + " more";
  return s;
}

std::string host_count(std::size_t n) { return std::to_string(n) + (n == 1 ? " host" : " hosts"); }

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

}  // namespace cudadiag::compare

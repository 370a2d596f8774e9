#include "cases/catalog.h"

#include <stdexcept>

namespace cudadiag::cases {

const std::vector<KernelFamily>& families() {
  static const std::vector<KernelFamily> list = {fault_family(), index_select_family(),
                                                 attention_family(), tma_family()};
  return list;
}

const KernelFamily* find_family(const std::string& kernel) {
  for (const auto& f : families())
    if (f.kernel == kernel) return &f;
  return nullptr;
}

const std::vector<CaseDef>& all_cases() {
  static const std::vector<CaseDef> list = [] {
    std::vector<CaseDef> out;
    for (const auto& f : families()) {
      auto c = f.cases();
      out.insert(out.end(), c.begin(), c.end());
    }
    return out;
  }();
  return list;
}

const CaseDef* find_case(const std::string& id) {
  for (const auto& c : all_cases())
    if (c.id == id) return &c;
  return nullptr;
}

json normalize_params(const std::string& kernel, const json& params) {
  const auto* f = find_family(kernel);
  if (!f) throw std::invalid_argument("unknown kernel '" + kernel + "'");
  return f->normalize_params(params);
}

std::string expectation_for(const CaseDef& c, const std::string& profile) {
  if (auto it = c.expected.find(profile); it != c.expected.end()) return it->second;
  if (auto it = c.expected.find("*"); it != c.expected.end()) return it->second;
  return "";
}

}  // namespace cudadiag::cases

#include "cases/catalog.h"

#include <stdexcept>

namespace cudadiag::cases {

namespace {

// The registration of each family, generated from CUDADIAG_FAMILIES.
KernelFamily registration(Family f) {
  switch (f) {
#define CUDADIAG_FAMILY_CASE(name) \
  case Family::name: return name##_family();
    CUDADIAG_FAMILIES(CUDADIAG_FAMILY_CASE)
#undef CUDADIAG_FAMILY_CASE
    case Family::program: break;  // `run`'s results: no catalog entry
  }
  throw std::logic_error("family without a registration");
}

}  // namespace

const std::vector<KernelFamily>& families() {
  static const std::vector<KernelFamily> list = [] {
    std::vector<KernelFamily> out;
    for (const auto& c : kFamilies) out.push_back(registration(c.value));
    return out;
  }();
  return list;
}

const KernelFamily& family(Family f) {
  for (const auto& k : families())
    if (k.id == f) return k;
  throw std::logic_error("family " + std::string(to_string(f)) + " is not registered in cases::families()");
}

const KernelFamily* find_family(const std::string& name) {
  // A family is named as its subcommand is (index-select) or as reports write it (index_select).
  std::string word = name;
  for (char& c : word)
    if (c == '-') c = '_';
  const auto f = parse_family(word);
  return f ? &family(*f) : nullptr;
}

std::string family_names() {
  std::string s;
  for (const auto& f : families()) s += (s.empty() ? "" : ", ") + std::string(to_string(f.id));
  return s;
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

json normalize_params(Family f, const json& params) { return family(f).normalize_params(params); }

double estimate_run_ms(Family f, const json& params) {
  const auto& k = family(f);
  return k.estimate_run_ms ? k.estimate_run_ms(params) : kDefaultRunMs;
}

const std::string& ProfileExpectations::text_for(const std::string& profile) const {
  const auto it = by_profile.find(profile);
  return it != by_profile.end() ? it->second : otherwise;
}

json to_json(const ProfileExpectations& e) {
  json j = json::object();
  if (!e.otherwise.empty()) j["*"] = e.otherwise;
  for (const auto& [profile, text] : e.by_profile) j[profile] = text;
  return j;
}

std::string expectation_text(const CaseDef& c, const std::string& profile) { return c.expected.text_for(profile); }

Expectation expectation_for(const CaseDef& c, const profiles::Profile& p) {
  return Expectation::parse(expectation_text(c, p.name));
}

profiles::Allocator allocator_for(const CaseDef& c, const profiles::Profile& p) {
  return profiles::allocator_for(p, c.fence_allocator);
}

}  // namespace cudadiag::cases

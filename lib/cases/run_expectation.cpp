#include "cases/run_expectation.h"

#include "profiles/profile.h"

namespace cudadiag::cases {

Expectation expectation_for_run(const CaseDef& c, profiles::Allocator a, bool blocking) {
  const std::string profile = profiles::profile_name_for_run(a, blocking, c.fence_allocator);
  if (auto it = c.expected.find(profile); it != c.expected.end()) return Expectation::parse(it->second);
  const std::string plain = profiles::profile_name_for_run(a, false, c.fence_allocator);
  if (auto it = c.expected.find(plain); it != c.expected.end()) return Expectation::parse(it->second);
  if (auto it = c.expected.find("*"); it != c.expected.end()) return Expectation::parse(it->second);
  return {};
}

void add_blocking_variants(std::map<std::string, std::string>& expected) {
  const std::map<std::string, std::string> plain = expected;
  for (const auto& [profile, expectation] : plain) {
    if (profile == "*" || profile.rfind("blocking", 0) == 0) continue;
    // The catalog keys its expectations by profile name: "default" gains "blocking" alone.
    const bool is_default = profiles::parse_base_profile(profile) == profiles::BaseProfile::plain;
    const std::string blocking = is_default ? "blocking" : "blocking+" + profile;
    expected.emplace(blocking, expectation);
  }
}

}  // namespace cudadiag::cases

#include "cases/run_expectation.h"

#include "profiles/profile.h"

namespace cudadiag::cases {

Expectation expectation_for_run(const CaseDef& c, profiles::Allocator a, bool blocking) {
  const std::string profile = profiles::profile_name_for_run(a, blocking, c.fence_allocator);
  const auto& by = c.expected.by_profile;
  if (auto it = by.find(profile); it != by.end()) return Expectation::parse(it->second);
  const std::string plain = profiles::profile_name_for_run(a, false, c.fence_allocator);
  if (auto it = by.find(plain); it != by.end()) return Expectation::parse(it->second);
  if (!c.expected.otherwise.empty()) return Expectation::parse(c.expected.otherwise);
  return {};
}

void add_blocking_variants(ProfileExpectations& expected) {
  const std::map<std::string, std::string> plain = expected.by_profile;
  for (const auto& [profile, expectation] : plain) {
    // A key is a profile name ("blocking+fence": its first part says) or an allocator name.
    const std::string_view first = std::string_view(profile).substr(0, profile.find('+'));
    if (profiles::parse_base_profile(first) == profiles::BaseProfile::blocking) continue;
    // The catalog keys its expectations by profile name: "default" gains "blocking" alone.
    const bool is_default = profiles::parse_base_profile(profile) == profiles::BaseProfile::plain;
    const std::string blocking = is_default ? "blocking" : "blocking+" + profile;
    expected.by_profile.emplace(blocking, expectation);
  }
}

}  // namespace cudadiag::cases

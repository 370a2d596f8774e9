#include "cases/run_expectation.h"

#include <stdexcept>

namespace cudadiag::cases {

std::string profile_for_run(const std::string& allocator, bool blocking, const std::string& fence_allocator) {
  std::string base;
  if (allocator == "pool") base = "default";
  else if (allocator == "direct") base = "nocache";
  else if (allocator == "fence-back" || allocator == "fence-front")
    base = allocator == fence_allocator ? "fence" : allocator;
  else
    throw std::invalid_argument("allocator: unknown '" + allocator +
                                "' (expected pool, direct, fence-back or fence-front)");
  if (!blocking) return base;
  return base == "default" ? "blocking" : "blocking+" + base;
}

std::string expectation_for_run(const CaseDef& c, const std::string& allocator, bool blocking) {
  const std::string profile = profile_for_run(allocator, blocking, c.fence_allocator);
  if (auto it = c.expected.find(profile); it != c.expected.end()) return it->second;
  const std::string plain = profile_for_run(allocator, false, c.fence_allocator);
  if (auto it = c.expected.find(plain); it != c.expected.end()) return it->second;
  if (auto it = c.expected.find("*"); it != c.expected.end()) return it->second;
  return "";
}

void add_blocking_variants(std::map<std::string, std::string>& expected) {
  const std::map<std::string, std::string> plain = expected;
  for (const auto& [profile, expectation] : plain) {
    if (profile == "*" || profile.rfind("blocking", 0) == 0) continue;
    const std::string blocking = profile == "default" ? "blocking" : "blocking+" + profile;
    expected.emplace(blocking, expectation);
  }
}

}  // namespace cudadiag::cases

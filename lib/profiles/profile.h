#pragma once
// Flag profiles: the settings a child gets before CUDA starts (environment, allocator
// mode, compute-sanitizer or not). Base profiles compose with '+': "blocking+fence",
// "blocking+sanitizer". Pure; nothing here starts a process.
// The sanitizer uses the direct allocator unless another part picks one: memcheck cannot
// see an overrun that stays inside a pool slab.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiles/allocator.h"
#include "util/choices.h"

namespace cudadiag::profiles {

// The base profiles; `plain` is the one named "default".
enum class BaseProfile : std::uint8_t { plain, blocking, nocache, fence, sanitizer };
inline constexpr ChoiceTable<BaseProfile, 5> kBaseProfiles{{{BaseProfile::plain, "default"},
                                                            {BaseProfile::blocking, "blocking"},
                                                            {BaseProfile::nocache, "nocache"},
                                                            {BaseProfile::fence, "fence"},
                                                            {BaseProfile::sanitizer, "sanitizer"}}};
constexpr std::string_view to_string(BaseProfile b) { return choice_name(kBaseProfiles, b); }
constexpr std::optional<BaseProfile> parse_base_profile(std::string_view text) {
  return parse_choice(kBaseProfiles, text);
}

// Which allocator the profile gives a case: keep the default (pool), direct, or the
// case's own fence side (fence-back, or fence-front for underruns).
enum class AllocatorRule { keep, direct, fence };
const char* to_string(AllocatorRule a);

struct Profile {
  std::string name;                            // canonical: base names joined by '+'
  std::vector<BaseProfile> parts;              // base profiles it is made of
  std::map<std::string, std::string> env_set;  // set in the child before CUDA starts
  AllocatorRule allocator = AllocatorRule::keep;
  bool sanitizer = false;                      // child runs under compute-sanitizer memcheck
};

// The base profiles, in a stable order: default, blocking, nocache, fence, sanitizer.
const std::vector<std::string>& base_profile_names();
// One line per base profile, for --help and errors.
std::string describe_base_profile(BaseProfile b);
// "default, blocking, nocache, fence, sanitizer".
std::string base_profile_list();

// Parses "blocking+fence". Throws std::invalid_argument naming unknown parts, repeated
// parts, or parts that set different allocators ("nocache+fence").
Profile parse_profile(const std::string& text);
// Parses a comma-separated list ("default,blocking+fence"); duplicates are an error.
std::vector<Profile> parse_profile_list(const std::string& text);

// The allocator a case runs with under the profile; fence_side is the case's fence.
Allocator allocator_for(const Profile& p, Allocator fence_side);

// The profile a single run chosen by allocator and CUDA_LAUNCH_BLOCKING corresponds to
// (the `fault` and `index-select` commands): pool -> default, direct -> nocache, the
// case's fence side -> fence; blocking adds "blocking". The other fence side has no
// profile of its own: its name is the allocator's ("fence-front"), and its expectation
// is keyed by that name in the catalog.
std::string profile_name_for_run(Allocator a, bool blocking, Allocator fence_side);

}  // namespace cudadiag::profiles

#pragma once
// Flag profiles: the settings a child gets before CUDA starts (environment, allocator
// mode, compute-sanitizer or not). Base profiles compose with '+': "blocking+fence",
// "blocking+sanitizer". Pure; nothing here starts a process.
// The sanitizer uses the direct allocator unless another part picks one: memcheck cannot
// see an overrun that stays inside a pool slab.
#include <map>
#include <string>
#include <vector>

namespace cudadiag::profiles {

// Which allocator the profile forces on a case: none keeps the default (pool);
// fence means the case's own fence_allocator (fence-back, or fence-front for underruns).
enum class AllocatorOverride { none, pool, direct, fence };
const char* to_string(AllocatorOverride a);

struct Profile {
  std::string name;                            // canonical: base names joined by '+'
  std::vector<std::string> parts;              // base profiles it is made of
  std::map<std::string, std::string> env_set;  // set in the child before CUDA starts
  AllocatorOverride allocator = AllocatorOverride::none;
  bool sanitizer = false;                      // child runs under compute-sanitizer memcheck
};

// The base profiles, in a stable order: default, blocking, nocache, fence, sanitizer.
const std::vector<std::string>& base_profile_names();
// One line per base profile, for --help and errors.
std::string describe_base_profile(const std::string& name);

// Parses "blocking+fence". Throws std::invalid_argument naming unknown parts, repeated
// parts, or parts that set different allocators ("nocache+fence").
Profile parse_profile(const std::string& text);
// Parses a comma-separated list ("default,blocking+fence"); duplicates are an error.
std::vector<Profile> parse_profile_list(const std::string& text);

// The allocator a case runs with under the profile ("pool", "direct", "fence-back",
// "fence-front").
std::string allocator_for(const Profile& p, const std::string& fence_allocator);

}  // namespace cudadiag::profiles

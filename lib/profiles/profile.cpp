#include "profiles/profile.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace cudadiag::profiles {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, sep)) out.push_back(trim(part));
  if (!text.empty() && text.back() == sep) out.push_back("");
  return out;
}

std::string known_list() { return base_profile_list(); }

// Base profile -> its settings. "default" contributes nothing, so "default+fence" is "fence".
Profile base(BaseProfile b) {
  Profile p;
  p.name = std::string(to_string(b));
  p.parts = {b};
  switch (b) {
    case BaseProfile::plain: p.allocator = AllocatorRule::keep; break;
    case BaseProfile::blocking: p.env_set["CUDA_LAUNCH_BLOCKING"] = "1"; break;
    case BaseProfile::nocache:
      p.allocator = AllocatorRule::direct;
      // Our kernels do not use PyTorch; the variable is set so that the report's
      // environment records the equivalent PyTorch setting.
      p.env_set["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1";
      break;
    case BaseProfile::fence: p.allocator = AllocatorRule::fence; break;
    case BaseProfile::sanitizer: p.sanitizer = true; break;
  }
  return p;
}

}  // namespace

const char* to_string(AllocatorRule a) {
  switch (a) {
    case AllocatorRule::keep: return "keep";
    case AllocatorRule::direct: return "direct";
    case AllocatorRule::fence: return "fence";
  }
  return "keep";
}

const std::vector<std::string>& base_profile_names() {
  static const std::vector<std::string> names = choice_names(kBaseProfiles);
  return names;
}

std::string base_profile_list() {
  std::string s;
  for (const auto& n : base_profile_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string describe_base_profile(BaseProfile b) {
  switch (b) {
    case BaseProfile::plain: return "pool allocator (like PyTorch's caching allocator)";
    case BaseProfile::blocking: return "CUDA_LAUNCH_BLOCKING=1, pool allocator";
    case BaseProfile::nocache: return "one cudaMalloc per buffer (PYTORCH_NO_CUDA_MEMORY_CACHING=1)";
    case BaseProfile::fence: return "buffers flush against unmapped memory: an overrun faults at once";
    case BaseProfile::sanitizer:
      return "child runs under compute-sanitizer memcheck (when installed), one cudaMalloc per buffer";
  }
  return "";
}

Profile parse_profile(const std::string& text) {
  const std::string t = trim(text);
  if (t.empty()) throw std::invalid_argument("empty profile name");
  Profile out;
  std::vector<std::string> unknown;
  for (const auto& part : split(t, '+')) {
    if (part.empty()) throw std::invalid_argument("profile '" + t + "': empty part");
    const auto known = parse_base_profile(part);
    if (!known) {
      unknown.push_back(part);
      continue;
    }
    if (std::find(out.parts.begin(), out.parts.end(), *known) != out.parts.end())
      throw std::invalid_argument("profile '" + t + "': '" + part + "' appears twice");
    const Profile b = base(*known);
    if (b.allocator != AllocatorRule::keep && out.allocator != AllocatorRule::keep &&
        b.allocator != out.allocator) {
      throw std::invalid_argument("profile '" + t + "': '" + part + "' sets allocator " +
                                  to_string(b.allocator) + " but another part sets " +
                                  to_string(out.allocator));
    }
    if (b.allocator != AllocatorRule::keep) out.allocator = b.allocator;
    for (const auto& [k, v] : b.env_set) out.env_set[k] = v;
    out.sanitizer = out.sanitizer || b.sanitizer;
    out.parts.push_back(*known);
  }
  if (!unknown.empty()) {
    std::string names;
    for (const auto& u : unknown) names += (names.empty() ? "'" : ", '") + u + "'";
    throw std::invalid_argument("unknown profile " + names + " in '" + t + "' (known: " +
                                known_list() + "; combine with '+', e.g. blocking+fence)");
  }
  // memcheck only knows allocations made through CUDA: inside a pool slab an overrun is
  // legal memory to it. So the sanitizer gets one cudaMalloc per buffer unless another
  // part chose an allocator ("fence+sanitizer" keeps the fence).
  if (out.sanitizer && out.allocator == AllocatorRule::keep) {
    out.allocator = AllocatorRule::direct;
    out.env_set["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1";
  }
  // "default" adds nothing when combined: "default+fence" is the fence profile.
  if (out.parts.size() > 1) {
    out.parts.erase(std::remove(out.parts.begin(), out.parts.end(), BaseProfile::plain), out.parts.end());
  }
  for (const auto p : out.parts) out.name += (out.name.empty() ? "" : "+") + std::string(to_string(p));
  return out;
}

std::vector<Profile> parse_profile_list(const std::string& text) {
  std::vector<Profile> out;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) throw std::invalid_argument("profile list '" + text + "': empty entry");
    Profile p = parse_profile(item);
    for (const auto& q : out)
      if (q.name == p.name)
        throw std::invalid_argument("profile list '" + text + "': '" + p.name + "' given twice");
    out.push_back(std::move(p));
  }
  return out;
}

Allocator allocator_for(const Profile& p, Allocator fence_side) {
  switch (p.allocator) {
    case AllocatorRule::keep: return Allocator::pool;
    case AllocatorRule::direct: return Allocator::direct;
    case AllocatorRule::fence: return is_fence(fence_side) ? fence_side : Allocator::fence_back;
  }
  return Allocator::pool;
}

std::string profile_name_for_run(Allocator a, bool blocking, Allocator fence_side) {
  std::string base;
  switch (a) {
    case Allocator::pool: base = to_string(BaseProfile::plain); break;
    case Allocator::direct: base = to_string(BaseProfile::nocache); break;
    case Allocator::fence_back:
    case Allocator::fence_front: base = a == fence_side ? to_string(BaseProfile::fence) : to_string(a); break;
  }
  if (!blocking) return base;
  return a == Allocator::pool ? "blocking" : "blocking+" + base;
}

}  // namespace cudadiag::profiles

#pragma once
// Strings that many reports share (case ids, parameters, outcomes, driver versions),
// stored once. A stored string keeps its address for the pool's lifetime, so the
// address is its identity: two reports agree on a value exactly when they hold the
// same pointer. Safe to use from several loader threads at once.
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace cudadiag::compare {

// An interned string; nullptr means "not recorded".
using Text = const std::string*;

class StringPool {
 public:
  Text intern(std::string_view s);
  std::size_t size() const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex mu_;
  std::unordered_set<std::string, Hash, std::equal_to<>> strings_;
};

// The text of an interned string, or `absent` when it was not recorded.
inline const std::string& text_or(Text t, const std::string& absent) { return t ? *t : absent; }

// The text of an interned string as a comparison shows it: "(not recorded)" when absent.
inline const std::string& shown_text(Text t) {
  static const std::string not_recorded = "(not recorded)";
  return text_or(t, not_recorded);
}

}  // namespace cudadiag::compare

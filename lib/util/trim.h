#pragma once
// Blanks (spaces, tabs, carriage returns and line feeds) trimmed from both ends of a view.
#include <string_view>

namespace cudadiag::util {

constexpr bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

constexpr std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace cudadiag::util

#pragma once
// Text views wrap long values at 80 columns under a hanging indent; a test that looks for
// a whole phrase reads the text with every continuation line joined back ("\n" and the
// indent that follows become one space).
#include <string>

namespace cudadiag::test {

inline std::string unwrapped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && i + 1 < text.size() && text[i + 1] == ' ') {
      while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
      out += ' ';
      continue;
    }
    out += text[i];
  }
  return out;
}

}  // namespace cudadiag::test

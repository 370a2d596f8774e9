#include "util/utf8.h"

#include <iterator>

#include <utf8cpp/utf8.h>  // utfcpp (Debian's libutfcpp-dev), header-only

namespace cudadiag {

std::string to_valid_utf8(std::string_view text) {
  if (utf8::is_valid(text.begin(), text.end())) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  utf8::replace_invalid(text.begin(), text.end(), std::back_inserter(out));
  return out;
}

std::string utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return to_valid_utf8(text);
  std::size_t cut = max_bytes;
  // Back off continuation bytes so that a sequence is not split (at most 3).
  for (int k = 0; k < 3 && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++k) --cut;
  return to_valid_utf8(text.substr(0, cut));
}

}  // namespace cudadiag

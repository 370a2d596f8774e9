#include "util/printable.h"

#include <cstdio>

namespace cudadiag {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one
// (overlong forms, surrogates and code points past U+10FFFF are not valid).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  unsigned cp = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

// "\x1b" for a byte; "\u009b" for a code point (a C1 control, a bidi control).
std::string escaped_byte(unsigned char value) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", value);
  return buf;
}

std::string escaped_code_point(unsigned code_point) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", code_point);
  return buf;
}

// The code point of a valid UTF-8 sequence of length n at s[i].
unsigned code_point(std::string_view s, std::size_t i, std::size_t n) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(s[k])); };
  if (n == 1) return b(i);
  unsigned cp = b(i) & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(i + k) & 0x3Fu);
  return cp;
}

// Bidirectional formatting characters: they reorder what a terminal or a Markdown view
// shows (U+202E turns "exe.txt" into "txt.exe"), so outside text could make a line
// read as something it is not ("Trojan Source", CVE-2021-42574).
bool is_bidi_control(unsigned cp) {
  return (cp >= 0x202A && cp <= 0x202E) ||  // LRE, RLE, PDF, LRO, RLO
         (cp >= 0x2066 && cp <= 0x2069) ||  // LRI, RLI, FSI, PDI
         cp == 0x200E || cp == 0x200F ||    // LRM, RLM
         cp == 0x061C;                      // ALM
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      out += escaped_byte(c);
      i += 1;
    } else if (c < 0x20 || c == 0x7F) {
      out += escaped_byte(c);
      i += 1;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out += escaped_code_point(static_cast<unsigned char>(text[i + 1]));  // C1: U+0080..U+009F
      i += 2;
    } else if (n >= 2 && is_bidi_control(code_point(text, i, n))) {
      out += escaped_code_point(code_point(text, i, n));
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace cudadiag

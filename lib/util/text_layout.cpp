#include "util/text_layout.h"

#include <algorithm>
#include <cstdint>

namespace cudadiag::text {
namespace {

// One code point starting at s[i]: its value and its length in bytes (an invalid lead or
// a cut sequence is one byte, shown as one column).
struct CodePoint {
  std::uint32_t value;
  std::size_t bytes;
};

CodePoint decode(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return {0xFFFD, 1};
  std::uint32_t v = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return {0xFFFD, 1};
    v = (v << 6) | (cc & 0x3Fu);
  }
  return {v, n};
}

bool in(std::uint32_t v, std::uint32_t lo, std::uint32_t hi) { return v >= lo && v <= hi; }

std::size_t columns_of(std::uint32_t v) {
  if (v == 0x200B || in(v, 0x200C, 0x200F) || in(v, 0x0300, 0x036F) || in(v, 0x1AB0, 0x1AFF) ||
      in(v, 0x1DC0, 0x1DFF) || in(v, 0x20D0, 0x20FF) || in(v, 0xFE00, 0xFE0F) || in(v, 0xFE20, 0xFE2F) ||
      v == 0xFEFF)
    return 0;
  if (in(v, 0x1100, 0x115F) || in(v, 0x2E80, 0x303E) || in(v, 0x3041, 0x33FF) || in(v, 0x3400, 0x4DBF) ||
      in(v, 0x4E00, 0x9FFF) || in(v, 0xA000, 0xA4CF) || in(v, 0xAC00, 0xD7A3) || in(v, 0xF900, 0xFAFF) ||
      in(v, 0xFE30, 0xFE4F) || in(v, 0xFF00, 0xFF60) || in(v, 0xFFE0, 0xFFE6) || in(v, 0x1F300, 0x1F64F) ||
      in(v, 0x1F900, 0x1F9FF) || in(v, 0x20000, 0x3FFFD))
    return 2;
  return 1;
}

// Length in bytes of an ANSI colour sequence (ESC [ digits ; ... m) at s[i], or 0.
std::size_t escape_at(std::string_view s, std::size_t i) {
  if (s[i] != '\033' || i + 1 >= s.size() || s[i + 1] != '[') return 0;
  std::size_t j = i + 2;
  while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';')) ++j;
  return j < s.size() && s[j] == 'm' ? j + 1 - i : 0;
}

// Visits the text one unit at a time (an escape sequence or a code point).
template <class Fn>
void for_each_unit(std::string_view s, Fn&& fn) {
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t esc = escape_at(s, i)) {
      fn(s.substr(i, esc), std::size_t{0});
      i += esc;
      continue;
    }
    const CodePoint cp = decode(s, i);
    fn(s.substr(i, cp.bytes), columns_of(cp.value));
    i += cp.bytes;
  }
}

// Lines of one paragraph; the text's first line (out still empty) may be `first` wide,
// the others `rest`.
void wrap_paragraph(std::string_view para, std::size_t first, std::size_t rest, std::vector<std::string>& out) {
  auto room = [&] { return out.empty() ? first : rest; };
  std::string line;
  std::size_t used = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < para.size()) {
    const std::size_t gap_start = i;
    while (i < para.size() && para[i] == ' ') ++i;
    if (i >= para.size()) break;
    // Spaces between words on one line are kept as written (aligned comments stay aligned).
    const std::size_t gap = std::max<std::size_t>(i - gap_start, 1);
    std::size_t j = para.find(' ', i);
    if (j == std::string_view::npos) j = para.size();
    const std::string_view word = para.substr(i, j - i);
    i = j;
    const std::size_t w = display_width(word);
    if (used > 0 && used + gap + w <= room()) {
      line += std::string(gap, ' ');
      line += word;
      used += gap + w;
      continue;
    }
    if (used > 0) {
      out.push_back(std::move(line));
      line.clear();
      used = 0;
    }
    // A word wider than the line stays whole (a path or a symbol cut in two can be
    // neither read nor copied); nothing joins it on its line.
    line = std::string(word);
    used = w > room() ? room() : w;
    any = true;
  }
  if (used > 0 || !any) out.push_back(std::move(line));
}

// Leading spaces of a prefix: where a continuation indents from.
std::string_view leading_spaces(std::string_view s) {
  const std::size_t n = s.find_first_not_of(' ');
  return s.substr(0, n == std::string_view::npos ? s.size() : n);
}

std::size_t g_columns = kColumns;

}  // namespace

std::size_t columns() { return g_columns; }

void set_columns(std::size_t width) { g_columns = width > 0 ? width : kColumns; }

std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for_each_unit(s, [&](std::string_view, std::size_t cols) { n += cols; });
  return n;
}

namespace {

std::vector<std::string> wrap_two(std::string_view text, std::size_t first, std::size_t rest) {
  first = std::max<std::size_t>(first, 1);
  rest = std::max<std::size_t>(rest, 1);
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    wrap_paragraph(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start), first,
                   rest, out);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> wrap(std::string_view text, std::size_t width) { return wrap_two(text, width, width); }

std::string hanging(std::string_view first_prefix, std::string_view rest_prefix, std::string_view text,
                    std::size_t width, std::size_t min_text) {
  const std::size_t first_w = display_width(first_prefix);
  const std::size_t rest_w = display_width(rest_prefix);
  const std::size_t rest_room = width > rest_w ? width - rest_w : 1;
  std::string out;
  if (first_w + min_text > width) {
    // The prefix leaves too little room: the text starts on its own line.
    std::string head(first_prefix);
    while (!head.empty() && head.back() == ' ') head.pop_back();
    out += head + "\n";
    for (const auto& l : wrap(text, rest_room)) out += std::string(rest_prefix) + l + "\n";
    return out;
  }
  const auto lines = wrap_two(text, width - first_w, rest_room);
  out += std::string(first_prefix) + lines.front() + "\n";
  for (std::size_t i = 1; i < lines.size(); ++i) out += std::string(rest_prefix) + lines[i] + "\n";
  return out;
}

std::string hanging(std::string_view first_prefix, std::string_view text, std::size_t width) {
  const std::size_t first_w = display_width(first_prefix);
  constexpr std::size_t kMinText = 24;
  if (first_w + kMinText > width) {
    const std::string rest = std::string(leading_spaces(first_prefix)) + "    ";
    return hanging(first_prefix, rest, text, width, kMinText);
  }
  return hanging(first_prefix, std::string(first_w, ' '), text, width, kMinText);
}

std::string labelled(std::string_view indent, std::string_view label, std::size_t label_width,
                     std::string_view value, std::size_t width) {
  if (value.find_first_not_of(" \n") == std::string_view::npos) return "";
  return hanging(std::string(indent) + pad_right(label, label_width) + "  ", value, width);
}

std::string abbreviate(std::string_view s, std::size_t width, std::string_view mark) {
  if (display_width(s) <= width) return std::string(s);
  const std::size_t mark_w = display_width(mark);
  if (width <= mark_w) return std::string(mark.substr(0, width));
  std::string out;
  std::size_t used = 0;
  bool full = false;
  for_each_unit(s, [&](std::string_view unit, std::size_t cols) {
    if (full) return;
    if (used + cols + mark_w > width) {
      full = true;
      return;
    }
    out += unit;
    used += cols;
  });
  return out + std::string(mark);
}

std::string pad_right(std::string_view s, std::size_t width) {
  const std::size_t w = display_width(s);
  return std::string(s) + (w >= width ? std::string() : std::string(width - w, ' '));
}

std::string pad_left(std::string_view s, std::size_t width) {
  const std::size_t w = display_width(s);
  return (w >= width ? std::string() : std::string(width - w, ' ')) + std::string(s);
}

std::vector<std::size_t> fit_columns(std::vector<std::size_t> natural, const std::vector<std::size_t>& minimum,
                                     std::size_t gap, std::size_t total) {
  auto sum = [&] {
    std::size_t n = natural.empty() ? 0 : gap * (natural.size() - 1);
    for (const auto w : natural) n += w;
    return n;
  };
  while (sum() > total) {
    // The widest column that may still shrink gives one column.
    std::size_t best = natural.size();
    for (std::size_t c = 0; c < natural.size(); ++c) {
      const std::size_t min = c < minimum.size() ? minimum[c] : 0;
      if (natural[c] > min && (best == natural.size() || natural[c] > natural[best])) best = c;
    }
    if (best == natural.size()) break;
    --natural[best];
  }
  return natural;
}

}  // namespace cudadiag::text

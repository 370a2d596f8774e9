#include "compare/render_tables.h"

#include <algorithm>
#include <set>

#include "util/printable.h"
#include "util/text_layout.h"

namespace cudadiag::compare {

using report::json;

bool always_shown_field(const std::string& field) {
  static const std::set<std::string> fields = {"driver version", "CUDA driver API", "CUDA runtime",
                                               "gpu0 model",     "suite",           "tool version"};
  return fields.count(field) > 0;
}

const json& member_or_empty(const json& obj, const char* key) {
  static const json empty = json::array();
  return obj.is_object() && obj.contains(key) ? obj[key] : empty;
}

std::string text_of(const json& v) {
  if (v.is_null()) return "—";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string join_values(const json& arr, const std::string& sep) {
  std::string s;
  for (const auto& v : arr) s += (s.empty() ? "" : sep) + text_of(v);
  return s;
}

namespace {

// --- Markdown ---------------------------------------------------------------------

std::string md_cell(const std::string& s) {
  std::string out;
  std::size_t start = 0;
  while (true) {  // line breaks stay breaks; every other control character is shown escaped
    const auto nl = s.find('\n', start);
    for (char ch : printable(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start))) {
      if (ch == '|') out += "\\|";
      else out += ch;
    }
    if (nl == std::string::npos) break;
    out += "<br>";
    start = nl + 1;
  }
  return out;
}

}  // namespace

void md_table(std::ostringstream& out, const Row& header, const std::vector<Row>& rows) {
  out << "|";
  for (const auto& h : header) out << " " << md_cell(h) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : rows) {
    out << "|";
    for (const auto& cell : row) out << " " << md_cell(cell) << " |";
    out << "\n";
  }
  out << "\n";
}

// --- text -------------------------------------------------------------------------

// As wide as the line (util/text_layout.h): every column but the last as wide as its
// widest cell, the last (usually the longest text: why, what differs) wrapped under its
// own column. A cell is never cut (a case id or a field name cut short names nothing):
// when the columns before the last leave it less than kLastMin, the table becomes a list,
// each row's first cell on its own line and the others under it, labelled by their
// header.
void text_table(std::ostringstream& out, const std::string& title, const Row& header,
                const std::vector<Row>& rows) {
  if (rows.empty() || header.empty()) return;
  out << "\n" << text::hanging("", "  ", title);
  constexpr std::size_t kIndent = 2, kGap = 2, kLastMin = 24;
  const std::size_t n = header.size();
  const std::size_t line_width = text::columns();
  auto cell = [&](const Row& r, std::size_t i) { return i < r.size() ? printable(r[i]) : std::string(); };
  std::vector<std::size_t> width(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    width[i] = text::display_width(cell(header, i));
    for (const auto& r : rows) width[i] = std::max(width[i], text::display_width(cell(r, i)));
  }
  std::size_t last_at = kIndent;
  for (std::size_t i = 0; i + 1 < n; ++i) last_at += width[i] + kGap;
  // The last column wraps between words, never inside one: its longest word must fit too.
  std::size_t longest_word = 0;
  for (const auto& r : rows) {
    const std::string c = cell(r, n - 1);
    for (std::size_t at = 0; at < c.size();) {
      const std::size_t end = std::min(c.find(' ', at), c.size());
      longest_word = std::max(longest_word, text::display_width(std::string_view(c).substr(at, end - at)));
      at = end + 1;
    }
  }
  if (n > 1 && last_at + std::max(std::min(width[n - 1], kLastMin), longest_word) > line_width) {
    std::size_t label_width = 0;
    for (std::size_t i = 1; i < n; ++i) label_width = std::max(label_width, text::display_width(cell(header, i)));
    for (const auto& r : rows) {
      out << text::hanging(std::string(kIndent, ' '), cell(r, 0));
      for (std::size_t i = 1; i < n; ++i)
        out << text::labelled(std::string(kIndent + 4, ' '), cell(header, i), label_width, cell(r, i));
    }
    return;
  }
  const std::string hang(last_at, ' ');
  auto line = [&](const Row& r) {
    std::string s(kIndent, ' ');
    for (std::size_t i = 0; i + 1 < n; ++i) s += text::pad_right(cell(r, i), width[i] + kGap);
    out << text::hanging(s, hang, cell(r, n - 1), line_width, 1);
  };
  line(header);
  for (const auto& r : rows) line(r);
}

void md_section(std::ostringstream& out, const Section& s) {
  if (s.rows.empty() && s.empty_text.empty()) return;
  out << "### " << s.title << "\n\n";
  if (s.rows.empty()) {
    out << s.empty_text << "\n\n";
  } else {
    md_table(out, s.header, s.rows);
  }
  if (!s.footnote.empty()) out << s.footnote << "\n\n";
}

void text_section(std::ostringstream& out, const Section& s) {
  if (s.rows.empty()) {
    if (!s.empty_text.empty()) out << "\n" << text::hanging("", "  ", s.title) << text::hanging("  ", s.empty_text);
    return;
  }
  text_table(out, s.title, s.header, s.rows);
  if (!s.footnote.empty()) out << text::hanging("  ", s.footnote);
}

}  // namespace cudadiag::compare

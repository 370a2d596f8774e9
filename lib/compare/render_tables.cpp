#include "compare/render_tables.h"

#include <algorithm>
#include <set>

#include "util/printable.h"

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

namespace {

constexpr std::size_t kMaxTextCell = 48;

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;  // count UTF-8 code points
  return n;
}

std::string clip(const std::string& s) {
  if (display_width(s) <= kMaxTextCell) return s;
  std::string out;
  std::size_t n = 0;
  for (unsigned char ch : s) {
    if ((ch & 0xC0) != 0x80 && ++n > kMaxTextCell - 1) break;
    out += static_cast<char>(ch);
  }
  return out + "…";
}

}  // namespace

void text_table(std::ostringstream& out, const std::string& title, const Row& header,
                const std::vector<Row>& rows, bool clip_cells) {
  if (rows.empty()) return;
  out << "\n" << title << "\n";
  std::vector<std::size_t> width(header.size(), 0);
  auto cell = [&](const Row& r, std::size_t i) {
    const std::string s = i < r.size() ? printable(r[i]) : "";
    return clip_cells ? clip(s) : s;
  };
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = display_width(cell(header, i));
  for (const auto& r : rows)
    for (std::size_t i = 0; i < header.size(); ++i) width[i] = std::max(width[i], display_width(cell(r, i)));
  auto line = [&](const Row& r) {
    out << " ";
    for (std::size_t i = 0; i < header.size(); ++i) {
      const auto s = cell(r, i);
      out << " " << s;
      if (i + 1 < header.size()) out << std::string(width[i] - display_width(s) + 1, ' ');
    }
    out << "\n";
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
    if (!s.empty_text.empty()) out << "\n" << s.title << "\n  " << s.empty_text << "\n";
    return;
  }
  text_table(out, s.title, s.header, s.rows, s.clip_cells);
  if (!s.footnote.empty()) out << "  " << s.footnote << "\n";
}

}  // namespace cudadiag::compare

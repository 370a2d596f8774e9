// Text layout: header facts, an aligned results table, detail blocks for the results
// that need a look, then summary, extra sections and the verdict. Colour (ANSI) and
// the check marks are used only on a terminal (color == true); otherwise plain ASCII
// so that files and pipes stay greppable.
#include <algorithm>
#include <array>
#include <optional>
#include <sstream>

#include "report/render_facts.h"
#include "report/render_formats.h"
#include "util/printable.h"

namespace cudadiag::report {
namespace {

constexpr const char* kGreen = "\033[32m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kReset = "\033[0m";

constexpr size_t kStderrLines = 5;

class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string operator()(const std::string& text, const char* code) const {
    return color_ && !text.empty() ? code + text + kReset : text;
  }

 private:
  bool color_;
};

std::string pad(const std::string& s, size_t width) {
  const size_t w = facts::display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string pad_left(const std::string& s, size_t width) {
  const size_t w = facts::display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

const char* verdict_colour(VerdictStatus status) {
  switch (exit_code_for(status)) {
    case 0: return kGreen;
    case 1: return kRed;
    default: return kYellow;
  }
}

void write_facts(std::ostringstream& out, const std::vector<facts::Fact>& list, const std::string& indent) {
  size_t width = 0;
  std::vector<facts::Fact> shown;
  for (const auto& f : list) shown.push_back({printable(f.label), printable(f.value)});
  for (const auto& f : shown) width = std::max(width, facts::display_width(f.label));
  for (const auto& f : shown) out << indent << pad(f.label, width) << "  " << f.value << "\n";
}

void write_table(std::ostringstream& out, const Report& r, const Painter& paint, bool color) {
  constexpr size_t kCols = 8;
  const std::array<std::string, kCols> head{"CASE", "PROFILE", "ALLOCATOR", "OUTCOME",
                                            "EXPECTED", "MET", "ERROR", "TIME"};
  std::vector<std::array<std::string, kCols>> rows;
  std::vector<std::optional<bool>> met;
  for (const auto& res : r.results) {
    const auto row = facts::row(res);
    std::string mark = "-";
    if (row.met) mark = *row.met ? (color ? "✓" : "ok") : (color ? "✗" : "FAIL");
    rows.push_back({printable(row.case_id), printable(row.profile),
                    row.allocator.empty() ? "-" : printable(row.allocator), printable(row.outcome),
                    row.expected.empty() ? "-" : printable(row.expected), mark,
                    row.error.empty() ? "-" : printable(row.error), row.duration});
    met.push_back(row.met);
  }
  std::array<size_t, kCols> width{};
  for (size_t c = 0; c < kCols; ++c) width[c] = facts::display_width(head[c]);
  for (const auto& row : rows) {
    for (size_t c = 0; c < kCols; ++c) width[c] = std::max(width[c], facts::display_width(row[c]));
  }
  auto line = [&](const std::array<std::string, kCols>& cells, const std::optional<bool>* mark) {
    std::string s;
    for (size_t c = 0; c < kCols; ++c) {
      std::string cell = c + 1 == kCols ? pad_left(cells[c], width[c]) : pad(cells[c], width[c]);
      if (c == 5 && mark) cell = paint(cell, !*mark ? kYellow : (**mark ? kGreen : kRed));
      s += cell + (c + 1 == kCols ? "" : "  ");
    }
    out << s << "\n";
  };
  line(head, nullptr);
  for (size_t i = 0; i < rows.size(); ++i) line(rows[i], &met[i]);
}

void write_details(std::ostringstream& out, const Report& r, const Painter& paint) {
  bool any = false;
  for (const auto& res : r.results) {
    if (!facts::needs_details(res)) continue;
    if (!any) out << "\n" << paint("Details", kBold) << "\n";
    any = true;
    out << "\n" << paint(printable(facts::detail_title(res)), kBold) << "\n";
    write_facts(out, facts::detail_facts(res), "  ");
    if (res.child && !res.child->stderr_excerpt.text.empty()) {
      size_t omitted = 0;
      const auto lines = facts::first_lines(res.child->stderr_excerpt.text, kStderrLines, omitted);
      out << "  stderr:\n";
      for (const auto& l : lines) out << "    | " << printable(l) << "\n";
      if (omitted > 0) out << "    | ... (" << omitted << " more line(s))\n";
    }
    for (const auto& x : facts::xid_lines(res)) out << "  " << printable(x) << "\n";
  }
}

}  // namespace

std::string render_text(const Report& r, bool color) {
  const Painter paint(color);
  std::ostringstream out;
  const std::string command = printable(r.invocation.command.empty() ? std::string("report") : r.invocation.command);
  const std::string status(to_string(r.verdict.status));
  out << paint("cudadiag " + command, kBold) << ": " << paint(status, verdict_colour(r.verdict.status)) << "\n";
  write_facts(out, facts::header(r), "  ");

  if (!r.results.empty()) {
    out << "\n";
    write_table(out, r, paint, color);
    write_details(out, r, paint);
  }

  for (const auto& section : r.extra.items()) {
    out << "\n" << paint(printable(facts::section_title(section.name)), kBold) << "\n";
    write_facts(out, facts::flatten_section(to_json(section.value)), "  ");
  }

  out << "\n" << paint("Summary", kBold) << "\n";
  write_facts(out, facts::summary(r), "  ");
  out << "\n" << paint("Verdict: ", kBold) << paint(status, verdict_colour(r.verdict.status)) << "\n";
  for (const auto& reason : r.verdict.reasons) out << "  - " << printable(reason) << "\n";
  if (const auto& c = r.verdict.coverage) {
    out << paint("Could have been seen:", kBold) << "\n";
    for (const auto& line : c->seen) out << "  - " << printable(line) << "\n";
    out << paint("Could not be seen:", kBold) << "\n";
    for (const auto& line : c->unseen) out << "  - " << printable(line) << "\n";
  }
  return out.str();
}

}  // namespace cudadiag::report

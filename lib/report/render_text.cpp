// Text layout: header facts, an aligned results table, detail blocks for the results
// that need a look, then summary (and, with -v, the command's own sections and the
// results' details) and the verdict, each reason said once. Colour (ANSI) and
// the check marks are used only on a terminal (color == true); otherwise plain ASCII
// so that files and pipes stay greppable.
#include <algorithm>
#include <array>
#include <optional>
#include <sstream>

#include <fmt/color.h>

#include "report/render_facts.h"
#include "report/render_formats.h"
#include "util/printable.h"
#include "util/text_layout.h"

namespace cudadiag::report {
namespace {

const fmt::text_style kGreen = fmt::fg(fmt::terminal_color::green);
const fmt::text_style kRed = fmt::fg(fmt::terminal_color::red);
const fmt::text_style kYellow = fmt::fg(fmt::terminal_color::yellow);
const fmt::text_style kBold = fmt::emphasis::bold;

constexpr size_t kTextStderrLines = 5;

class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string operator()(const std::string& text, const fmt::text_style& style) const {
    return color_ && !text.empty() ? fmt::format(style, "{}", text) : text;
  }

 private:
  bool color_;
};

fmt::text_style verdict_colour(VerdictStatus status) {
  switch (exit_code_for(status)) {
    case 0: return kGreen;
    case 1: return kRed;
    default: return kYellow;
  }
}

// label  value, the values wrapped under their own first column; a fact with no value
// is left out rather than printed as an empty labelled line.
void write_facts(std::ostringstream& out, const std::vector<facts::Fact>& list, const std::string& indent) {
  size_t width = 0;
  std::vector<facts::Fact> shown;
  for (const auto& f : list)
    if (!f.value.empty()) shown.push_back({printable(f.label), printable(f.value)});
  for (const auto& f : shown) width = std::max(width, text::display_width(f.label));
  for (const auto& f : shown) out << text::labelled(indent, f.label, width, f.value);
}

// A table too wide for the line: each result as a list item, the case id whole and the
// other cells after it, on its line when they fit, else under it.
void write_list(std::ostringstream& out, const std::vector<std::array<std::string, 8>>& rows,
                const std::vector<std::optional<bool>>& met, const std::vector<size_t>& shown, const Painter& paint,
                bool color) {
  constexpr size_t kCase = 0, kExpected = 4, kMet = 5;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> cells;
    for (const size_t c : shown) {
      if (c == kCase || c == kMet || rows[i][c] == "-") continue;
      std::string cell = c == kExpected ? "expected " + rows[i][c] : rows[i][c];
      if (c == kExpected && met[i]) cell += *met[i] ? " (met)" : " (NOT met)";
      cells.push_back(cell);
    }
    std::string rest;
    for (const auto& c : cells) rest += (rest.empty() ? "" : ", ") + c;
    const std::string one_line = rows[i][kCase] + "  " + rest;
    std::string text = rows[i][kCase] + "\n";
    if (text::display_width(one_line) <= text::columns()) {
      text = one_line + "\n";
    } else {
      // Under the id, broken between cells only ("12.5 ms" is one value).
      std::string line = "    ";
      for (size_t k = 0; k < cells.size(); ++k) {
        const std::string piece = cells[k] + (k + 1 < cells.size() ? "," : "");
        if (line.size() > 4 && text::display_width(line + " " + piece) > text::columns()) {
          text += line + "\n";
          line = "    ";
        }
        line += (line.size() > 4 ? " " : "") + piece;
      }
      text += line + "\n";
    }
    if (color && met[i] && !*met[i]) text = paint(text, kRed);
    out << text;
  }
}

// The results table, as wide as the line: a column that says nothing for any row ("-"
// in every one: no allocator, no expectation) is left out; too wide, the error's class
// goes, then the error column (each result that needs a look has its error in its
// detail block). A cell is never cut (a case id cut short names no case): a table that
// still cannot fit becomes a list.
void write_table(std::ostringstream& out, const Report& r, const Painter& paint, bool color) {
  constexpr size_t kCols = 8;
  constexpr size_t kMet = 5, kTime = 7;
  const std::array<std::string, kCols> head{"CASE", "PROFILE", "ALLOCATOR", "OUTCOME",
                                            "EXPECTED", "MET", "ERROR", "TIME"};
  // Columns always shown: the case, its outcome and its time.
  const std::array<bool, kCols> always{true, false, false, true, false, false, false, true};
  constexpr size_t kError = 6;
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
  std::vector<size_t> shown;
  for (size_t c = 0; c < kCols; ++c) {
    const bool says_something =
        std::any_of(rows.begin(), rows.end(), [c](const auto& row) { return row[c] != "-"; });
    if (always[c] || says_something) shown.push_back(c);
  }
  std::array<size_t, kCols> width{};
  auto measure = [&] {
    for (size_t c = 0; c < kCols; ++c) {
      width[c] = text::display_width(head[c]);
      for (const auto& row : rows) width[c] = std::max(width[c], text::display_width(row[c]));
    }
  };
  measure();
  auto total = [&] {
    size_t n = 2 * (shown.size() - 1);
    for (const size_t c : shown) n += width[c];
    return n;
  };
  auto is_shown = [&](size_t c) { return std::find(shown.begin(), shown.end(), c) != shown.end(); };
  const size_t line = text::columns();
  if (total() > line && is_shown(kError)) {
    for (auto& row : rows)
      if (const auto paren = row[kError].find(" ("); paren != std::string::npos) row[kError].erase(paren);
    measure();
  }
  if (total() > line && is_shown(kError)) shown.erase(std::find(shown.begin(), shown.end(), kError));
  if (total() > line) {
    write_list(out, rows, met, shown, paint, color);
    return;
  }
  auto print = [&](const std::array<std::string, kCols>& cells, const std::optional<bool>* mark) {
    std::string s;
    for (size_t i = 0; i < shown.size(); ++i) {
      const size_t c = shown[i];
      const bool last = i + 1 == shown.size();
      std::string cell = c == kTime ? text::pad_left(cells[c], width[c]) : last ? cells[c] : text::pad_right(cells[c], width[c]);
      if (c == kMet && mark) cell = paint(cell, !*mark ? kYellow : (**mark ? kGreen : kRed));
      s += cell + (last ? "" : "  ");
    }
    out << s << "\n";
  };
  print(head, nullptr);
  for (size_t i = 0; i < rows.size(); ++i) print(rows[i], &met[i]);
}

void write_details(std::ostringstream& out, const Report& r, const Painter& paint, bool verbose) {
  bool any = false;
  std::string last_reason;
  for (const auto& res : r.results) {
    if (!facts::needs_details(res)) continue;
    if (!any) out << "\n" << paint("Details", kBold) << "\n";
    any = true;
    out << "\n" << paint(text::hanging("", "  ", printable(facts::detail_title(res))), kBold);
    // A reason shared with the block before (every configuration skipped for the same
    // missing driver) is not said again.
    auto detail = facts::detail_facts(res);
    if (!verbose) std::erase_if(detail, [](const facts::Fact& f) { return f.role == facts::Fact::Role::internal; });
    for (auto& f : detail)
      if (f.role == facts::Fact::Role::reason && !f.value.empty() && f.value == last_reason) f.value = "the same as above";
      else if (f.role == facts::Fact::Role::reason) last_reason = f.value;
    write_facts(out, detail, "  ");
    if (res.child && !res.child->stderr_excerpt.text.empty()) {
      size_t omitted = 0;
      const auto lines = facts::first_lines(res.child->stderr_excerpt.text, kTextStderrLines, omitted);
      out << "  stderr:\n";
      for (const auto& l : lines) out << text::hanging("    | ", "    | ", printable(l));
      if (omitted > 0) out << "    | ... (" << omitted << " more line(s))\n";
    }
    for (const auto& x : facts::xid_lines(res)) out << text::hanging("  ", "    ", printable(x));
  }
}

}  // namespace

std::string render_text(const Report& r, bool color, bool verbose) {
  const Painter paint(color);
  std::ostringstream out;
  const std::string command = printable(r.invocation.command.empty() ? std::string("report") : r.invocation.command);
  const std::string status(to_string(r.verdict.status));
  out << paint("cudadiag " + command, kBold) << ": " << paint(status, verdict_colour(r.verdict.status)) << "\n";
  write_facts(out, facts::header(r), "  ");

  if (!r.results.empty()) {
    out << "\n";
    write_table(out, r, paint, color);
    write_details(out, r, paint, verbose);
  }

  // A command's own section (run's plan and ladder, repro's suite) is for tools and for
  // -v: the table, the details and the verdict say what a reader needs.
  std::string hidden;
  for (const auto& section : r.extra.items()) {
    if (!verbose) {
      hidden += (hidden.empty() ? "" : ", ") + printable(section.name);
      continue;
    }
    out << "\n" << paint(printable(facts::section_title(section.name)), kBold) << "\n";
    const auto section_facts = facts::flatten_section(to_json(section.value));
    // A section that is one list or one value has no label of its own to show.
    if (section_facts.size() == 1 && section_facts.front().role == facts::Fact::Role::lone_value)
      out << text::hanging("  ", printable(section_facts.front().value));
    else
      write_facts(out, section_facts, "  ");
  }

  out << "\n" << paint("Summary", kBold) << "\n";
  auto summary = facts::summary(r);
  if (!hidden.empty()) summary.push_back({"more", "-v, or the JSON report (" + hidden + ")"});
  write_facts(out, summary, "  ");
  out << "\n" << paint("Verdict: ", kBold) << paint(status, verdict_colour(r.verdict.status)) << "\n";
  const auto reasons = facts::distinct_reasons(r.verdict.reasons);
  for (const auto& reason : reasons) out << text::hanging("  - ", "    ", printable(reason));
  if (const auto& c = r.verdict.coverage) {
    // A line the verdict's reasons already say is not said again; a list with nothing
    // left in it is left out, and one that is empty says so.
    std::vector<std::string> unseen;
    for (const auto& line : c->unseen)
      if (!facts::already_said(line, reasons)) unseen.push_back(line);
    if (!c->seen.empty() || !unseen.empty()) {
      out << paint("Could have been seen:", kBold) << (c->seen.empty() ? " nothing" : "") << "\n";
      for (const auto& line : c->seen) out << text::hanging("  - ", "    ", printable(line));
    }
    if (!unseen.empty()) {
      out << paint("Could not be seen:", kBold) << "\n";
      for (const auto& line : unseen) out << text::hanging("  - ", "    ", printable(line));
    }
  }
  return out.str();
}

}  // namespace cudadiag::report

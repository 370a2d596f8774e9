// Markdown layout (GitHub-flavoured): what a user pastes into a bug report. Headings,
// a pipe table of results, details as bullet lists, stderr excerpts in code fences.
#include <algorithm>
#include <cctype>
#include <sstream>

#include "report/render_facts.h"
#include "report/render_formats.h"
#include "util/printable.h"

namespace cudadiag::report {
namespace {

constexpr size_t kStderrLines = 20;

// A table cell: pipes escaped, control characters made visible.
std::string cell(const std::string& s) {
  std::string out;
  for (const char c : printable(s)) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

// Inline code; backticks inside would end the span early, so they become quotes.
std::string code(const std::string& s) {
  if (s.empty()) return "-";
  std::string t = s;
  std::replace(t.begin(), t.end(), '`', '\'');
  return "`" + t + "`";
}

// A fence longer than any run of backticks in the text, so the text cannot close it.
std::string fence_for(const std::string& text) {
  size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

void write_bullets(std::ostringstream& out, const std::vector<facts::Fact>& list) {
  for (const auto& f : list) {
    std::string label = printable(f.label);
    if (label.rfind("gpu", 0) == 0) {
      label.replace(0, 3, "GPU");
    } else if (!label.empty()) {
      label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[0])));
    }
    out << "- **" << label << ":** " << printable(f.value) << "\n";
  }
}

void write_table(std::ostringstream& out, const Report& r) {
  out << "| Case | Profile | Allocator | Outcome | Expected | Met | Error | Duration |\n"
      << "|---|---|---|---|---|:---:|---|---:|\n";
  for (const auto& res : r.results) {
    const auto row = facts::row(res);
    const std::string met = !row.met ? "-" : (*row.met ? "✓" : "✗");
    out << "| " << cell(code(row.case_id)) << " | " << cell(row.profile) << " | " << cell(row.allocator) << " | "
        << cell(row.outcome) << " | " << cell(row.expected.empty() ? "" : code(row.expected)) << " | " << met
        << " | " << cell(row.error) << " | " << cell(row.duration) << " |\n";
  }
}

void write_details(std::ostringstream& out, const Report& r, bool verbose) {
  bool any = false;
  for (const auto& res : r.results) {
    if (!facts::needs_details(res)) continue;
    if (!any) out << "\n### Details\n";
    any = true;
    out << "\n#### " << printable(facts::detail_title(res)) << "\n\n";
    auto detail = facts::detail_facts(res);
    if (!verbose) std::erase_if(detail, [](const facts::Fact& f) { return f.role == facts::Fact::Role::internal; });
    write_bullets(out, detail);
    for (const auto& x : facts::xid_lines(res)) out << "- **Kernel log:** " << printable(x) << "\n";
    if (res.child && !res.child->stderr_excerpt.text.empty()) {
      size_t omitted = 0;
      const auto lines = facts::first_lines(res.child->stderr_excerpt.text, kStderrLines, omitted);
      std::string body;
      for (const auto& l : lines) body += printable(l) + "\n";
      if (omitted > 0) body += "... (" + std::to_string(omitted) + " more line(s))\n";
      const std::string fence = fence_for(body);
      out << "\nstderr:\n\n" << fence << "text\n" << body << fence << "\n";
    }
  }
}

}  // namespace

std::string render_markdown(const Report& r, bool verbose) {
  std::ostringstream out;
  const std::string command = printable(r.invocation.command.empty() ? std::string("report") : r.invocation.command);
  const std::string status(to_string(r.verdict.status));
  out << "## cudadiag " << command << ": **" << status << "**\n\n";
  write_bullets(out, facts::header(r));

  if (!r.results.empty()) {
    out << "\n### Results\n\n";
    write_table(out, r);
    write_details(out, r, verbose);
  }

  // A command's own section is the JSON's, shown with -v (render_text.cpp says why).
  if (verbose)
    for (const auto& section : r.extra.items()) {
      out << "\n### " << printable(facts::section_title(section.name)) << "\n\n";
      write_bullets(out, facts::flatten_section(to_json(section.value)));
    }

  out << "\n### Summary\n\n";
  write_bullets(out, facts::summary(r));
  out << "\n### Verdict: " << status << "\n";
  const auto reasons = facts::distinct_reasons(r.verdict.reasons);
  if (!reasons.empty()) out << "\n";
  for (const auto& reason : reasons) out << "- " << printable(reason) << "\n";
  if (const auto& c = r.verdict.coverage) {
    std::vector<std::string> unseen;
    for (const auto& line : c->unseen)
      if (!facts::already_said(line, reasons)) unseen.push_back(line);
    if (!c->seen.empty()) out << "\n**Could have been seen:**\n\n";
    for (const auto& line : c->seen) out << "- " << printable(line) << "\n";
    if (!unseen.empty()) out << "\n**Could not be seen:**\n\n";
    for (const auto& line : unseen) out << "- " << printable(line) << "\n";
  }
  return out.str();
}

}  // namespace cudadiag::report

#include "compare/render_compare.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/color.h>
#include <fmt/format.h>

#include "compare/host_list.h"
#include "compare/outcome_diff.h"
#include "compare/render_fleet.h"
#include "compare/render_tables.h"
#include "util/printable.h"
#include "util/text_layout.h"

namespace cudadiag::compare {
namespace {

using report::json;


// The comparison section as the tables read it; {} when the report has none.
json comparison_of(const report::Report& r) {
  const report::Value* v = r.extra.find("comparison");
  return v && v->fields() ? report::to_json(*v) : json::object();
}

std::vector<std::string> host_labels(const json& cmp) {
  std::vector<std::string> labels;
  for (const auto& r : member_or_empty(cmp, "reports")) labels.push_back(r.value("host", ""));
  return labels;
}

std::string host_cell(const json& h) {
  if (h.is_null()) return "—";
  std::string s = h.value("outcome", "");
  if (h.contains("error_code") && !h["error_code"].is_null()) s += fmt::format(" {}", h["error_code"].dump());
  if (h.contains("error_name")) s += fmt::format(" {}", h["error_name"].get<std::string>());
  if (h.contains("site") && h["site"].is_string()) s += fmt::format(" [{}]", h["site"].get<std::string>());
  if (h.value("runs", 1) > 1) s += fmt::format(" ({}/{})", h.value("failures", 0), h.value("runs", 0));
  return s;
}

std::vector<Row> environment_table(const json& cmp, const std::vector<std::string>& labels,
                                   bool mark_differences) {
  std::vector<Row> rows;
  for (const auto& e : cmp.value("environment_common", json::array())) {
    if (!always_shown_field(e.value("field", ""))) continue;
    Row row{e.value("field", "")};
    for (std::size_t i = 0; i < labels.size(); ++i) row.push_back(e.value("value", ""));
    rows.push_back(std::move(row));
  }
  for (const auto& e : cmp.value("environment_diff", json::array())) {
    Row row{e.value("field", "") + (mark_differences ? " ≠" : "")};
    for (const auto& l : labels) row.push_back(text_of(e["values"].value(l, json(nullptr))));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Row> outcome_table(const json& cmp, const std::vector<std::string>& labels) {
  std::vector<Row> rows;
  for (const auto& c : cmp.value("outcome_diff", json::array())) {
    Row row{c.value("case", "")};
    for (const auto& l : labels) row.push_back(host_cell(c["hosts"].value(l, json(nullptr))));
    row.push_back(c.value("kind", ""));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Row> rate_table(const json& cmp) {
  std::vector<Row> rows;
  for (const auto& t : cmp.value("rate_tests", json::array())) {
    rows.push_back({t.value("case", ""),
                    fmt::format("{} {}/{}", t.value("a", ""), t.value("a_failures", 0), t.value("a_runs", 0)),
                    fmt::format("{} {}/{}", t.value("b", ""), t.value("b_failures", 0), t.value("b_runs", 0)),
                    fmt::format("{:.4g}", t.value("p_value", 1.0)),
                    fmt::format("{} at α = {:g}", t.value("conclusion", ""), t.value("alpha", 0.05))});
  }
  return rows;
}

std::vector<Row> suspect_table(const json& cmp) {
  std::vector<Row> rows;
  int rank = 0;
  for (const auto& s : cmp.value("suspects", json::array())) {
    rows.push_back({std::to_string(++rank), s.value("field", ""), std::to_string(s.value("score", 0)),
                    s.value("why", "")});
  }
  return rows;
}

std::vector<Row> unpaired_table(const json& cmp) {
  std::vector<Row> rows;
  for (const auto& u : cmp.value("unpaired", json::array()))
    rows.push_back({u.value("case", ""), join_values(u["present_in"], ", "), join_values(u["missing_in"], ", "), u.value("hint", "")});
  return rows;
}

std::vector<Row> baseline_table(const json& cmp) {
  std::vector<Row> rows;
  if (!cmp.contains("baseline")) return rows;
  for (const auto& c : cmp["baseline"].value("cases", json::array())) {
    std::string outliers;
    for (const auto& [host, outcome] : c["outliers"].items())
      outliers += (outliers.empty() ? "" : ", ") + host + ": " + text_of(outcome);
    rows.push_back({c.value("case", ""), c.value("baseline", ""),
                    std::to_string(c.value("hosts_agreeing", 0)), outliers});
  }
  return rows;
}

std::string status_colored(report::VerdictStatus status, bool color) {
  const std::string word(report::to_string(status));
  if (!color) return word;
  const auto colour = status == report::VerdictStatus::same            ? fmt::terminal_color::green
                      : status == report::VerdictStatus::host_specific ? fmt::terminal_color::red
                                                                       : fmt::terminal_color::yellow;
  return fmt::format(fmt::emphasis::bold | fmt::fg(colour), "{}", word);
}

CaseKind kind_of(const json& c) { return parse_case_kind(c.value("kind", "")).value_or(CaseKind::agree); }

}  // namespace

std::string summary_sentence(const report::Report& r) {
  const json& cmp = comparison_of(r);
  const auto n = member_or_empty(cmp, "reports").size();
  const auto paired = cmp.value("paired_results", 0);
  std::size_t specific = 0, flaky = 0;
  for (const auto& c : member_or_empty(cmp, "outcome_diff")) {
    specific += kind_of(c) == CaseKind::host_specific;
    flaky += kind_of(c) == CaseKind::flaky;
  }
  using report::VerdictStatus;
  const VerdictStatus status = r.verdict.status;
  std::string s;
  if (status == VerdictStatus::same) {
    s = fmt::format("No difference that matters between {} reports ({} paired results).", n, paired);
  } else if (status == VerdictStatus::host_specific) {
    s = fmt::format("{} case(s) fail only on some hosts (or fail differently there).", specific);
    const auto& suspects = member_or_empty(cmp, "suspects");
    s += suspects.empty() ? " No recorded environment difference lines up with them."
                          : " Most likely suspect: " + suspects[0].value("field", "") + ".";
  } else if (status == VerdictStatus::flaky) {
    s = fmt::format("{} case(s) fail at a rate, and the hosts do not differ significantly.", flaky);
  } else if (status == VerdictStatus::config_mismatch) {
    s = "The reports were not produced under the same conditions: the comparison is weaker.";
  } else {
    s = "Verdict: " + std::string(report::to_string(status)) + ".";
  }
  if (fleet_layout(n)) s += " " + fleet_sentence(cmp);
  return s;
}

namespace {

// Two or three reports: a column per host.
void md_few_hosts(std::ostringstream& out, const json& cmp) {
  const auto labels = host_labels(cmp);
  Row hosts_header{""};
  for (const auto& l : labels) hosts_header.push_back(l);
  std::vector<Row> hosts{{"report"}, {"GPU"}, {"driver"}, {"results"}};
  for (const auto& rep : member_or_empty(cmp, "reports")) {
    hosts[0].push_back(rep.value("file", ""));
    hosts[1].push_back(text_of(rep.value("gpu", json(nullptr))));
    hosts[2].push_back(text_of(rep.value("driver", json(nullptr))));
    hosts[3].push_back(std::to_string(rep.value("results", 0)));
  }
  out << "### Hosts\n\n";
  md_table(out, hosts_header, hosts);

  Row env_header{"field"};
  for (const auto& l : labels) env_header.push_back(l);
  out << "### Environment\n\n";
  const auto env = environment_table(cmp, labels, true);
  if (member_or_empty(cmp, "environment_diff").empty()) out << "No recorded difference.\n\n";
  if (!env.empty()) md_table(out, env_header, env);

  const auto outcomes = outcome_table(cmp, labels);
  out << "### Failing or differing outcomes\n\n";
  if (outcomes.empty()) {
    out << fmt::format("None: every one of the {} paired results agrees.\n\n", cmp.value("paired_results", 0));
  } else {
    Row header{"case"};
    for (const auto& l : labels) header.push_back(l);
    header.push_back("kind");
    md_table(out, header, outcomes);
  }
  md_section(out, {"Failure rates (Fisher's exact test, two-sided)", {"case", "host A", "host B", "p", "conclusion"},
                   rate_table(cmp), "", ""});
  md_section(out, {"Suspects, most likely first", {"#", "field", "score", "why"}, suspect_table(cmp), "", ""});
  md_section(out, {"Majority baseline", {"case", "baseline", "hosts agreeing", "outliers"}, baseline_table(cmp), "", ""});
  md_section(out, {"Unpaired results", {"case", "ran on", "missing in", "why"}, unpaired_table(cmp), "", ""});
}

void text_few_hosts(std::ostringstream& out, const json& cmp) {
  const auto labels = host_labels(cmp);
  Row hosts_header{"host", "report", "GPU", "driver", "results"};
  std::vector<Row> hosts;
  for (const auto& rep : member_or_empty(cmp, "reports"))
    hosts.push_back({rep.value("host", ""), rep.value("file", ""), text_of(rep.value("gpu", json(nullptr))),
                     text_of(rep.value("driver", json(nullptr))), std::to_string(rep.value("results", 0))});
  text_table(out, "Hosts", hosts_header, hosts);

  Row env_header{"field"};
  for (const auto& l : labels) env_header.push_back(l);
  text_table(out, "Environment (≠ marks a difference)", env_header, environment_table(cmp, labels, true));

  Row oc_header{"case"};
  for (const auto& l : labels) oc_header.push_back(l);
  oc_header.push_back("kind");
  text_table(out, "Failing or differing outcomes", oc_header, outcome_table(cmp, labels));
  text_table(out, "Failure rates (Fisher's exact test, two-sided)", {"case", "host A", "host B", "p", "conclusion"},
             rate_table(cmp));
  text_table(out, "Suspects, most likely first", {"#", "field", "score", "why"}, suspect_table(cmp));
  text_table(out, "Majority baseline", {"case", "baseline", "agreeing", "outliers"}, baseline_table(cmp));
  text_table(out, "Unpaired results", {"case", "ran on", "missing in", "why"}, unpaired_table(cmp));
}

bool is_fleet(const json& cmp) { return fleet_layout(member_or_empty(cmp, "reports").size()); }

}  // namespace

std::string render_compare_md(const report::Report& r) {
  const json& cmp = comparison_of(r);
  std::ostringstream out;
  out << "## cudadiag compare: `" << report::to_string(r.verdict.status) << "`\n\n" << printable(summary_sentence(r)) << "\n\n";
  for (const auto& reason : r.verdict.reasons) out << "- " << printable(reason) << "\n";
  if (!r.verdict.reasons.empty()) out << "\n";
  if (is_fleet(cmp)) {
    for (const auto& s : fleet_sections(cmp)) md_section(out, s);
  } else {
    md_few_hosts(out, cmp);
  }
  const auto& notes = member_or_empty(cmp, "notes");
  if (!notes.empty()) {
    out << "### Notes\n\n";
    for (const auto& n : notes) out << "- " << printable(text_of(n)) << "\n";
    out << "\n";
  }
  out << "<sub>cudadiag " << r.tool.version << " (" << r.tool.git_revision
      << ")</sub>\n";
  return out.str();
}

std::string render_compare_text(const report::Report& r, bool color, bool verbose) {
  const json& cmp = comparison_of(r);
  std::ostringstream out;
  out << "cudadiag compare: " << status_colored(r.verdict.status, color) << "\n"
      << text::hanging("", "  ", printable(summary_sentence(r)));
  const bool summary = is_fleet(cmp) && !verbose;
  constexpr std::size_t kSummaryReasons = 3;
  const std::size_t reasons = summary ? std::min(r.verdict.reasons.size(), kSummaryReasons) : r.verdict.reasons.size();
  for (std::size_t k = 0; k < reasons; ++k) out << text::hanging("  - ", "    ", printable(r.verdict.reasons[k]));
  if (reasons < r.verdict.reasons.size())
    out << fmt::format("  - … and {} more (-v lists them)\n", r.verdict.reasons.size() - reasons);
  if (summary) {
    for (const auto& s : fleet_summary_sections(cmp)) text_section(out, s);
    // Notes (a report passed over, a weaker comparison) stay: a few of them.
    constexpr std::size_t kSummaryNotes = 4;
    const auto& notes = member_or_empty(cmp, "notes");
    if (!notes.empty()) out << "\nNotes\n";
    for (std::size_t k = 0; k < notes.size() && k < kSummaryNotes; ++k)
      out << text::hanging("  - ", "    ", printable(text_of(notes[k])));
    if (notes.size() > kSummaryNotes) out << fmt::format("  - … and {} more (-v lists them)\n", notes.size() - kSummaryNotes);
    out << "\n" << text::hanging("", "  ", "Every table: add -v, or keep the JSON report (--format json -o FILE).");
    return out.str();
  }
  if (is_fleet(cmp)) {
    for (const auto& s : fleet_sections(cmp)) text_section(out, s);
  } else {
    text_few_hosts(out, cmp);
  }
  const auto& notes = member_or_empty(cmp, "notes");
  if (!notes.empty()) {
    out << "\nNotes\n";
    for (const auto& n : notes) out << text::hanging("  - ", "    ", printable(text_of(n)));
  }
  return out.str();
}

}  // namespace cudadiag::compare

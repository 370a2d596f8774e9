#include "compare/render_fleet.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "compare/host_list.h"
#include "compare/outcome_diff.h"

namespace cudadiag::compare {
namespace {

using report::json;

constexpr std::size_t kRowsShown = 20;    // rows of a fleet table
constexpr std::size_t kValuesShown = 4;   // values in one cell
// The summary (text without -v) fits one screen: a few rows per table, a few values per cell.
constexpr std::size_t kSummaryRows = 6;
constexpr std::size_t kSummaryHosts = 4;

std::string more_rows(std::size_t total, const char* what) {
  return total > kRowsShown ? fmt::format("… and {} more {} (the JSON report lists all of them)", total - kRowsShown, what)
                            : "";
}

std::string joined(const json& arr, const std::string& sep, const std::string& none = "—") {
  const std::string s = join_values(arr, sep);
  return s.empty() ? none : s;
}

// The first `shown` values of arr joined, and how many more there are: a cell that lists
// a group's differing cases must stay a cell, not hundreds of lines.
std::string joined_capped(const json& arr, const std::string& sep, std::size_t shown, const std::string& none = "—") {
  if (!arr.is_array() || arr.size() <= shown) return joined(arr, sep, none);
  json head = json::array();
  for (std::size_t k = 0; k < shown; ++k) head.push_back(arr[k]);
  return join_values(head, sep) + fmt::format(" and {} more", arr.size() - shown);
}

// "580.65.06: 9995 (node0001); 575.57.08: 5 (node0042)"
std::string tally_cell(const json& tally) {
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < tally.size() && k < kValuesShown; ++k) {
    const auto& t = tally[k];
    parts.push_back(fmt::format("{}: {} ({})", text_of(t.value("value", json(nullptr))), t.value("hosts", 0),
                                t.value("example", "")));
  }
  if (tally.size() > kValuesShown) parts.push_back(fmt::format("{} other values", tally.size() - kValuesShown));
  return join(parts, "; ");
}

std::string verdict_counts(const json& cmp) {
  std::vector<std::string> parts;
  for (const auto& [status, n] : member_or_empty(cmp, "verdicts").items())
    parts.push_back(fmt::format("{} {}", status.empty() ? "(none)" : status, n.get<std::size_t>()));
  return join(parts, ", ");
}

std::map<std::string, std::size_t> environment_sizes(const json& cmp) {
  std::map<std::string, std::size_t> sizes;
  for (const auto& e : member_or_empty(cmp, "environment_groups")) sizes[e.value("id", "")] = e.value("hosts", 0);
  return sizes;
}

Section overview(const json& cmp) {
  Section s{"Fleet", {"", "count"}, {}, "", ""};
  s.rows.push_back({"reports", std::to_string(member_or_empty(cmp, "reports").size())});
  s.rows.push_back({"their own verdicts", verdict_counts(cmp)});
  s.rows.push_back({"groups of identical hosts", std::to_string(member_or_empty(cmp, "groups").size())});
  s.rows.push_back({"environments", std::to_string(member_or_empty(cmp, "environment_groups").size())});
  s.rows.push_back({"paired results", std::to_string(cmp.value("paired_results", 0))});
  return s;
}

Section groups(const json& cmp) {
  Section s{"Groups (same environment, outcomes and own verdict)",
            {"group", "hosts", "example", "environment", "own verdict", "differs from most hosts in"}, {}, "", ""};
  const auto& all = member_or_empty(cmp, "groups");
  for (std::size_t k = 0; k < all.size() && k < kRowsShown; ++k) {
    const auto& g = all[k];
    s.rows.push_back({g.value("id", ""), std::to_string(g.value("hosts", 0)), g.value("example", ""),
                      g.value("environment", ""), g.value("verdict", ""), joined_capped(g["outcomes"], "; ", kRowsShown)});
  }
  s.footnote = more_rows(all.size(), "groups");
  return s;
}

// The summary's groups: the largest ones first (as the report orders them), with how many
// cases each differs in (which ones: the hosts that stand out, and -v).
Section summary_groups(const json& cmp) {
  Section s{"Groups of identical hosts (the largest first)",
            {"group", "hosts", "example", "own verdict", "differs from most hosts in"}, {}, "", ""};
  const auto& all = member_or_empty(cmp, "groups");
  for (std::size_t k = 0; k < all.size() && k < kSummaryRows; ++k) {
    const auto& g = all[k];
    const auto differing = member_or_empty(g, "outcomes").size();
    s.rows.push_back({g.value("id", ""), std::to_string(g.value("hosts", 0)), g.value("example", ""),
                      g.value("verdict", ""), differing == 0 ? std::string("—") : fmt::format("{} case(s)", differing)});
  }
  if (all.size() > kSummaryRows) s.footnote = fmt::format("… and {} more groups", all.size() - kSummaryRows);
  return s;
}

// The hosts that stand out, each with its first cases and its first environment difference.
Section summary_standouts(const json& cmp) {
  Section s{"Hosts that stand out from the majority", {"host", "cases", "environment"}, {}, "", ""};
  if (!cmp.contains("baseline")) return s;
  const auto& all = member_or_empty(cmp["baseline"], "outliers");
  for (std::size_t k = 0; k < all.size() && k < kSummaryHosts; ++k)
    s.rows.push_back({all[k].value("host", ""), joined_capped(all[k]["cases"], ", ", 1),
                      joined_capped(all[k]["environment"], "; ", 1, "—")});
  if (all.size() > kSummaryHosts) s.footnote = fmt::format("… and {} more hosts", all.size() - kSummaryHosts);
  return s;
}

Section environments(const json& cmp) {
  Section s{"Environments", {"environment", "hosts", "example", "differs from most hosts in"}, {}, "", ""};
  const auto& all = member_or_empty(cmp, "environment_groups");
  if (all.size() < 2) return s;
  for (std::size_t k = 0; k < all.size() && k < kRowsShown; ++k) {
    const auto& e = all[k];
    s.rows.push_back({e.value("id", ""), std::to_string(e.value("hosts", 0)), e.value("example", ""),
                      joined(e["differences"], "; ")});
  }
  s.footnote = more_rows(all.size(), "environments");
  return s;
}

Section environment_values(const json& cmp) {
  Section s{"Environment (≠ marks a difference)", {"field", "value: hosts (example)"}, {}, "", ""};
  const auto n = member_or_empty(cmp, "reports").size();
  for (const auto& e : member_or_empty(cmp, "environment_common"))
    if (always_shown_field(e.value("field", ""))) s.rows.push_back({e.value("field", ""), fmt::format("{}: all {}", e.value("value", ""), n)});
  for (const auto& e : member_or_empty(cmp, "environment_diff"))
    s.rows.push_back({e.value("field", "") + " ≠", tally_cell(member_or_empty(e, "summary"))});
  return s;
}

// Cases that fail the same way everywhere say nothing about one host: counted, not listed.
Section outcomes(const json& cmp) {
  Section s{"Failing or differing outcomes", {"case", "outcome: hosts (example)", "kind"}, {}, "", ""};
  std::size_t shown = 0, common = 0;
  for (const auto& c : member_or_empty(cmp, "outcome_diff")) {
    if (parse_case_kind(c.value("kind", "")) == CaseKind::common_failure) {
      ++common;
      continue;
    }
    if (++shown > kRowsShown) continue;
    s.rows.push_back({c.value("case", ""), tally_cell(member_or_empty(c, "states")), c.value("kind", "")});
  }
  std::vector<std::string> notes;
  if (shown > kRowsShown) notes.push_back(more_rows(shown, "cases"));
  if (common > 0)
    notes.push_back(fmt::format("{} case(s) fail the same way on every host and are not listed here (the JSON report "
                                "lists them)",
                                common));
  s.footnote = join(notes, "; ");
  return s;
}

Section group_tests(const json& cmp) {
  Section s{"Failure rates by environment (Fisher's exact test against every other host, Bonferroni-corrected)",
            {"case", "environment", "failed", "elsewhere", "p", "conclusion"}, {}, "", ""};
  const auto sizes = environment_sizes(cmp);
  const auto& all = member_or_empty(cmp, "group_tests");
  for (std::size_t k = 0; k < all.size() && k < kRowsShown; ++k) {
    const auto& t = all[k];
    const auto env = t.value("environment", "");
    const auto size = sizes.count(env) ? sizes.at(env) : 0;
    s.rows.push_back({t.value("case", ""), fmt::format("{} ({})", env, host_count(size)),
                      fmt::format("{}/{}", t.value("failures", 0), t.value("runs", 0)),
                      fmt::format("{}/{}", t.value("rest_failures", 0), t.value("rest_runs", 0)),
                      fmt::format("{:.3g}", t.value("p_value", 1.0)),
                      fmt::format("{} at α = {:.3g}", t.value("conclusion", ""), t.value("alpha", 0.05))});
  }
  s.footnote = more_rows(all.size(), "tests");
  return s;
}

Section host_tests(const json& cmp) {
  Section s{"Hosts that fail more often than the rest (Fisher's exact test, Bonferroni-corrected)",
            {"case", "host", "failed", "elsewhere", "p"}, {}, "", ""};
  std::size_t significant = 0, tests = 0;
  for (const auto& t : member_or_empty(cmp, "rate_tests")) {
    if (!t.value("against_rest", false)) continue;
    ++tests;
    if (!t.value("significant", false)) continue;
    if (++significant > kRowsShown) continue;
    s.rows.push_back({t.value("case", ""), t.value("a", ""),
                      fmt::format("{}/{}", t.value("a_failures", 0), t.value("a_runs", 0)),
                      fmt::format("{}/{}", t.value("b_failures", 0), t.value("b_runs", 0)),
                      fmt::format("{:.3g} (α = {:.3g})", t.value("p_value", 1.0), t.value("alpha", 0.05))});
  }
  if (tests > 0 && significant == 0) s.empty_text = fmt::format("None of the {} tested hosts.", tests);
  if (significant > kRowsShown) s.footnote = more_rows(significant, "hosts");
  return s;
}

Section suspects(const json& cmp) {
  Section s{"Suspects, most likely first", {"#", "field", "score", "why"}, {}, "", ""};
  int rank = 0;
  for (const auto& x : member_or_empty(cmp, "suspects"))
    s.rows.push_back({std::to_string(++rank), x.value("field", ""), std::to_string(x.value("score", 0)), x.value("why", "")});
  return s;
}

Section standouts(const json& cmp) {
  Section s{"Hosts that stand out from the majority", {"host", "cases", "environment"}, {}, "", ""};
  if (!cmp.contains("baseline")) return s;
  const auto& all = member_or_empty(cmp["baseline"], "outliers");
  for (std::size_t k = 0; k < all.size() && k < kRowsShown; ++k)
    s.rows.push_back({all[k].value("host", ""), joined(all[k]["cases"], ", "), joined(all[k]["environment"], "; ", "as most hosts")});
  s.footnote = more_rows(all.size(), "hosts");
  return s;
}

std::string hosts_cell(const json& labels) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < labels.size() && k < kExampleHosts; ++k) names.push_back(text_of(labels[k]));
  std::string s = host_count(labels.size());
  if (!names.empty()) s += " (" + join(names, ", ") + (labels.size() > kExampleHosts ? ", …" : "") + ")";
  return s;
}

Section unpaired(const json& cmp) {
  Section s{"Unpaired results", {"case", "ran on", "missing in", "why"}, {}, "", ""};
  const auto& all = member_or_empty(cmp, "unpaired");
  for (std::size_t k = 0; k < all.size() && k < kRowsShown; ++k)
    s.rows.push_back({all[k].value("case", ""), hosts_cell(member_or_empty(all[k], "present_in")),
                      hosts_cell(member_or_empty(all[k], "missing_in")), all[k].value("hint", "")});
  s.footnote = more_rows(all.size(), "cases");
  return s;
}

}  // namespace

std::vector<Section> fleet_summary_sections(const json& cmp) { return {summary_groups(cmp), summary_standouts(cmp)}; }

std::vector<Section> fleet_sections(const json& cmp) {
  return {overview(cmp),   groups(cmp),   environments(cmp), environment_values(cmp), outcomes(cmp),
          group_tests(cmp), host_tests(cmp), suspects(cmp),   standouts(cmp),          unpaired(cmp)};
}

std::string fleet_sentence(const json& cmp) {
  const auto reports = member_or_empty(cmp, "reports").size();
  const auto groups = member_or_empty(cmp, "groups").size();
  std::size_t standing_out = 0;
  if (cmp.contains("baseline")) standing_out = member_or_empty(cmp["baseline"], "outliers").size();
  const std::string standing = standing_out == 0   ? "no host stands out"
                               : standing_out == 1 ? "1 host stands out"
                                                   : fmt::format("{} hosts stand out", standing_out);
  return fmt::format("{} reports in {} group(s) of identical hosts; {} from the majority; own verdicts: {}.", reports,
                     groups, standing, verdict_counts(cmp));
}

}  // namespace cudadiag::compare

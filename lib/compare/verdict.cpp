#include "compare/verdict.h"

#include <algorithm>
#include <map>
#include <set>

namespace cudadiag::compare {
namespace {

// A health counter that is higher where the case fails is the strongest lead there is;
// one that is lower there explains nothing.
constexpr int kHealthBoost = 20;
constexpr int kHealthPenalty = 40;

bool row_applies(const EnvRow& row, const PairKey& key) {
  return row.device.empty() || row.device == key.device;
}

std::set<std::string> values_of(const EnvRow& row, const std::vector<std::size_t>& idx) {
  std::set<std::string> s;
  for (auto i : idx) s.insert(row.values[i] ? *row.values[i] : std::string("(not recorded)"));
  return s;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

std::string value_list(const EnvRow& row, const std::vector<std::size_t>& idx,
                       const std::vector<std::string>& labels) {
  std::vector<std::string> parts;
  for (auto i : idx) parts.push_back(labels[i] + ": " + (row.values[i] ? *row.values[i] : "—"));
  return join(parts, ", ");
}

int suspect_score(const EnvRow& row, const CaseAnalysis& c) {
  int score = row.weight;
  if (!row.health_counter) return score;
  double worst_failing = 0, worst_passing = 0;
  for (auto i : c.failing) worst_failing = std::max(worst_failing, row.counter_totals[i]);
  for (auto i : c.passing) worst_passing = std::max(worst_passing, row.counter_totals[i]);
  return worst_failing > worst_passing ? score + kHealthBoost : score - kHealthPenalty;
}

std::string outcome_state(const HostRun& h) {
  return h.outcome + (h.error_code ? " " + std::to_string(*h.error_code) : "");
}

}  // namespace

std::vector<Suspect> rank_suspects(const std::vector<EnvRow>& env, const OutcomeDiff& outcomes,
                                   const std::vector<std::string>& labels) {
  std::map<std::string, Suspect> by_field;
  for (const auto& c : outcomes.cases) {
    if (c.kind != CaseKind::host_specific || c.failing.empty() || c.passing.empty()) continue;
    for (const auto& row : env) {
      if (!row.differs || !row_applies(row, c.key)) continue;
      const auto f = values_of(row, c.failing), p = values_of(row, c.passing);
      const bool lines_up = std::none_of(f.begin(), f.end(), [&](const std::string& v) {
        return p.count(v) > 0;
      });
      if (!lines_up) continue;
      auto& s = by_field[row.field];
      const int score = suspect_score(row, c);
      if (s.field.empty() || score > s.score) {
        s.field = row.field;
        s.category = row.category;
        s.score = score;
        s.failing = c.failing;
        s.passing = c.passing;
        s.why = "fails where " + value_list(row, c.failing, labels) + "; passes where " +
                value_list(row, c.passing, labels);
      }
      s.cases.push_back(c.key.label());
    }
  }
  std::vector<Suspect> out;
  for (auto& [field, s] : by_field) out.push_back(std::move(s));
  // More cases explained first among equal weights; stable field order otherwise.
  std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.cases.size() > b.cases.size();
  });
  return out;
}

std::vector<std::string> config_weaknesses(const std::vector<LoadedReport>& reports,
                                           const std::vector<EnvRow>& env, const Pairing& pairing,
                                           const OutcomeDiff& outcomes) {
  std::vector<std::string> out;
  std::vector<std::string> labels;
  for (const auto& r : reports) labels.push_back(r.label);
  std::vector<std::size_t> all(reports.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;

  static const std::map<std::string, std::string> why = {
      {"suite", "the hosts ran different suites"},
      {"command", "the reports come from different commands"},
      {"tool version", "different cudadiag versions: cases and checks may differ"},
      {"git revision", "different cudadiag builds: kernels and checks may differ"},
      {"CUDA toolkit (build)", "cudadiag was built with different CUDA toolkits"},
  };
  for (const auto& row : env) {
    const auto it = why.find(row.field);
    if (it != why.end() && row.differs)
      out.push_back(it->second + " (" + value_list(row, all, labels) + ")");
  }

  std::set<std::string> other_params, not_run;
  for (const auto& u : pairing.unpaired) {
    (u.hint.find("parameters") != std::string::npos ? other_params : not_run).insert(u.key.case_id);
  }
  if (!other_params.empty()) {
    std::vector<std::string> ids(other_params.begin(), other_params.end());
    out.push_back("cases ran with different parameters on different hosts: " + join(ids, ", "));
  }
  if (!pairing.unpaired.empty() && !not_run.empty()) {
    out.push_back(std::to_string(pairing.unpaired.size()) +
                  " result(s) have no partner in every report; they are listed as unpaired");
  }
  bool any_results = false;
  for (const auto& r : reports) any_results = any_results || !r.report.results.empty();
  for (const auto& r : reports) {
    if (r.report.results.empty() && any_results) {
      out.push_back(r.label + " has no results: only its environment can be compared");
    } else if (!r.report.results.empty() && r.report.gpu.is_object() &&
               r.report.gpu.value("ran", true) == false) {
      out.push_back(r.label + ": the GPU part did not run (" +
                    r.report.gpu.value("reason", std::string("no reason given")) + ")");
    }
  }
  std::map<std::size_t, int> skipped_here;
  for (const auto& c : outcomes.cases) {
    bool ran_somewhere = false;
    for (const auto& h : c.hosts) ran_somewhere = ran_somewhere || (h.present && h.outcome != "skipped");
    if (!ran_somewhere) continue;
    for (std::size_t i = 0; i < c.hosts.size(); ++i)
      if (c.hosts[i].present && c.hosts[i].outcome == "skipped") ++skipped_here[i];
  }
  for (const auto& [i, n] : skipped_here)
    out.push_back(std::to_string(n) + " case(s) were skipped on " + labels[i] +
                  " but ran on another host");
  return out;
}

Baseline majority_baseline(const std::vector<EnvRow>& env, const OutcomeDiff& outcomes,
                           std::size_t report_count) {
  Baseline b;
  if (report_count < 3) return b;
  b.applies = true;
  std::map<std::size_t, Outlier> by_report;
  for (const auto& c : outcomes.cases) {
    std::map<std::string, std::size_t> votes;
    std::size_t present = 0;
    for (const auto& h : c.hosts)
      if (h.present) ++votes[outcome_state(h)], ++present;
    if (present < 3) continue;
    const auto top = std::max_element(votes.begin(), votes.end(),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
    if (top->second * 2 <= present || top->second == present) continue;  // no majority, or no outlier
    BaselineCase bc{c.key.label(), top->first, top->second, {}};
    for (std::size_t i = 0; i < c.hosts.size(); ++i) {
      if (!c.hosts[i].present || outcome_state(c.hosts[i]) == top->first) continue;
      bc.outliers.emplace_back(i, outcome_state(c.hosts[i]));
      by_report[i].report = i;
      by_report[i].cases.push_back(c.key.label());
    }
    b.cases.push_back(std::move(bc));
  }
  for (auto& [i, o] : by_report) {
    for (const auto& row : env) {
      if (!row.differs || !row.values[i]) continue;
      std::map<std::string, std::size_t> votes;
      for (const auto& v : row.values)
        if (v) ++votes[*v];
      const auto top = std::max_element(votes.begin(), votes.end(),
                                        [](const auto& x, const auto& y) { return x.second < y.second; });
      std::size_t recorded = 0;
      for (const auto& v : row.values) recorded += v.has_value();
      if (top->second * 2 > recorded && *row.values[i] != top->first)
        o.environment.push_back(row.field + " = " + *row.values[i] + " (most hosts: " + top->first + ")");
    }
    b.outliers.push_back(std::move(o));
  }
  return b;
}

VerdictParts decide_verdict(const OutcomeDiff& outcomes, const std::vector<Suspect>& suspects,
                            const std::vector<std::string>& weaknesses, const Baseline& baseline,
                            const std::vector<std::string>& labels) {
  VerdictParts v;
  std::vector<std::string> specific, flaky;
  std::size_t common = 0;
  for (const auto& c : outcomes.cases) {
    if (c.kind == CaseKind::host_specific) specific.push_back(c.key.label() + ": " + c.explanation);
    if (c.kind == CaseKind::flaky) flaky.push_back(c.key.label() + ": " + c.explanation);
    if (c.kind == CaseKind::common_failure) ++common;
  }
  if (!specific.empty()) {
    v.status = report::VerdictStatus::host_specific;
    v.reasons = specific;
    std::vector<std::string> top;
    for (std::size_t i = 0; i < suspects.size() && i < 3; ++i)
      top.push_back(suspects[i].field + " (" + suspects[i].why + ")");
    v.reasons.push_back(top.empty() ? "no recorded environment difference lines up with the failures"
                                    : "suspects, most likely first: " + join(top, "; "));
  } else if (!flaky.empty()) {
    v.status = report::VerdictStatus::flaky;
    v.reasons = flaky;
  } else if (!weaknesses.empty()) {
    v.status = report::VerdictStatus::config_mismatch;
  } else {
    v.status = report::VerdictStatus::same;
    v.reasons.push_back("every paired result agrees across " + std::to_string(labels.size()) +
                        " reports");
  }
  if (v.status == report::VerdictStatus::host_specific)
    for (const auto& f : flaky) v.reasons.push_back(f);
  for (const auto& o : baseline.outliers) {
    v.reasons.push_back(labels[o.report] + " stands out from the majority in " +
                        std::to_string(o.cases.size()) + " case(s): " + join(o.cases, ", "));
  }
  if (common > 0)
    v.reasons.push_back(std::to_string(common) +
                        " case(s) fail the same way on every host: the code or the configuration, "
                        "not the machine");
  for (const auto& w : weaknesses)
    v.reasons.push_back(std::string(v.status == report::VerdictStatus::config_mismatch ? "" : "comparison is weaker: ") + w);
  return v;
}

}  // namespace cudadiag::compare

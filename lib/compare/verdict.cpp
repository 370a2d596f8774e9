#include "compare/verdict.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "compare/host_list.h"

namespace cudadiag::compare {
namespace {

// A health counter that is higher where the case fails is the strongest lead there is;
// one that is lower there explains nothing.
constexpr int kHealthBoost = 20;
constexpr int kHealthPenalty = 40;
constexpr std::size_t kValuesListed = 3;

bool row_applies(const EnvRow& row, const PairKey& key) {
  return row.device.empty() || row.device == key.device;
}


std::set<Text> values_of(const EnvRow& row, const std::vector<std::size_t>& idx) {
  std::set<Text> s;
  for (auto i : idx) s.insert(row.values[i]);
  return s;
}

int suspect_score(const EnvRow& row, const CaseAnalysis& c) {
  int score = row.weight;
  if (!row.health_counter) return score;
  double worst_failing = 0, worst_passing = 0;
  for (auto i : c.failing) worst_failing = std::max(worst_failing, row.counter_totals[i]);
  for (auto i : c.passing) worst_passing = std::max(worst_passing, row.counter_totals[i]);
  return worst_failing > worst_passing ? score + kHealthBoost : score - kHealthPenalty;
}

std::vector<std::size_t> all_reports(std::size_t n) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  return all;
}

// The row values of every report, counted once.
struct RowMajority {
  Text top = nullptr;      // most common recorded value
  std::size_t top_count = 0;
  std::size_t recorded = 0;
};

RowMajority count_values(const EnvRow& row) {
  std::unordered_map<Text, std::size_t> votes;
  RowMajority m;
  for (const auto v : row.values) {
    if (!v) continue;
    ++m.recorded;
    const auto n = ++votes[v];
    if (n > m.top_count || (n == m.top_count && *v < *m.top)) {
      m.top = v;
      m.top_count = n;
    }
  }
  return m;
}

}  // namespace

Text majority_value(const EnvRow& row) {
  const auto m = count_values(row);
  return m.top_count * 2 > m.recorded ? m.top : nullptr;
}

std::string values_text(const EnvRow& row, const std::vector<std::size_t>& idx,
                        const std::vector<std::string>& labels) {
  if (!fleet_layout(labels.size())) {
    std::vector<std::string> parts;
    for (auto i : idx) parts.push_back(labels[i] + ": " + (row.values[i] ? *row.values[i] : "—"));
    return join(parts, ", ");
  }
  std::map<Text, std::vector<std::size_t>> by_value;
  for (auto i : idx) by_value[row.values[i]].push_back(i);
  std::vector<std::pair<Text, std::vector<std::size_t>>> values(by_value.begin(), by_value.end());
  std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) {
    if (a.second.size() != b.second.size()) return a.second.size() > b.second.size();
    return shown_text(a.first) < shown_text(b.first);
  });
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < values.size() && k < kValuesListed; ++k)
    parts.push_back(shown_text(values[k].first) + " (" + host_count(values[k].second.size()) + ": " +
                    example_names(values[k].second, labels) + ")");
  if (values.size() > kValuesListed) parts.push_back(fmt::format("{} other values", values.size() - kValuesListed));
  return join(parts, ", ");
}

std::vector<Suspect> rank_suspects(const std::vector<EnvRow>& env, const OutcomeDiff& outcomes,
                                   const std::vector<std::string>& labels) {
  std::map<std::string, Suspect> by_field;
  for (const auto& c : outcomes.cases) {
    if (c.kind != CaseKind::host_specific || c.failing.empty() || c.passing.empty()) continue;
    for (const auto& row : env) {
      if (!row.differs || !row_applies(row, c.key)) continue;
      const auto f = values_of(row, c.failing), p = values_of(row, c.passing);
      const bool lines_up = std::none_of(f.begin(), f.end(), [&](Text v) { return p.count(v) > 0; });
      if (!lines_up) continue;
      auto& s = by_field[row.field];
      const int score = suspect_score(row, c);
      if (s.field.empty() || score > s.score) {
        s.field = row.field;
        s.category = row.category;
        s.score = score;
        s.failing = c.failing;
        s.passing = c.passing;
        s.why = "fails where " + values_text(row, c.failing, labels) + "; passes where " +
                values_text(row, c.passing, labels);
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

namespace {

// "gpu-node-b has no results" for a few reports; "3 hosts have no results (a, b, c)" for a fleet.
void per_host_weakness(const std::vector<std::size_t>& hosts, const std::vector<std::string>& labels,
                       const std::string& singular, const std::string& plural, std::vector<std::string>& out) {
  if (hosts.empty()) return;
  if (!fleet_layout(labels.size())) {
    for (auto i : hosts) out.push_back(labels[i] + singular);
    return;
  }
  out.push_back(host_count(hosts.size()) + (hosts.size() == 1 ? singular : plural) + " (" +
                example_names(hosts, labels) + ")");
}

}  // namespace

Weaknesses config_weaknesses(const std::vector<ReportDigest>& reports, const std::vector<EnvRow>& env,
                             const Pairing& pairing, const OutcomeDiff& outcomes) {
  Weaknesses w;
  auto& out = w.mismatch;
  std::vector<std::string> labels;
  for (const auto& r : reports) labels.push_back(r.label);
  const auto all = all_reports(reports.size());

  static const std::map<std::string, std::string> why = {
      {"suite", "the hosts ran different suites"},
      {"command", "the reports come from different commands"},
  };
  static const std::map<std::string, std::string> build_why = {
      {"tool version", "different cudadiag versions: cases and checks may differ"},
      {"git revision", "different cudadiag builds: kernels and checks may differ"},
      {"CUDA toolkit (build)", "cudadiag was built with different CUDA toolkits"},
  };
  for (const auto& row : env) {
    if (!row.differs) continue;
    if (const auto it = why.find(row.field); it != why.end())
      out.push_back(it->second + " (" + values_text(row, all, labels) + ")");
    if (const auto it = build_why.find(row.field); it != build_why.end())
      w.builds.push_back(it->second + " (" + values_text(row, all, labels) + ")");
  }
  // The schema version is the build's too: fields a newer one adds are unknown in the
  // older report, never read as zero.
  std::map<std::string, std::vector<std::size_t>> by_schema;
  for (std::size_t i = 0; i < reports.size(); ++i)
    by_schema[reports[i].schema_version ? *reports[i].schema_version : "?"].push_back(i);
  if (by_schema.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& [version, hosts] : by_schema)
      parts.push_back(version + " (" + (fleet_layout(reports.size()) ? host_count(hosts.size()) + ": " : "") +
                      example_names(hosts, labels) + ")");
    w.builds.push_back("reports of different schema versions: " + join(parts, ", ") +
                       "; what one build records and the other does not is compared as unknown");
  }
  const bool builds_differ = !w.builds.empty();
  auto& pairing_out = builds_differ ? w.builds : out;
  const std::string because = builds_differ ? " (the builds differ, and so may their suites)" : "";

  std::set<std::string> other_params, not_run;
  for (const auto& u : pairing.unpaired)
    (u.hint.find("parameters") != std::string::npos ? other_params : not_run).insert(u.key.case_id);
  if (!other_params.empty()) {
    std::vector<std::string> ids(other_params.begin(), other_params.end());
    pairing_out.push_back("cases ran with different parameters on different hosts: " + join(ids, ", ") + because);
  }
  if (!pairing.unpaired.empty() && !not_run.empty()) {
    pairing_out.push_back(std::to_string(pairing.unpaired_results()) +
                          " result(s) have no partner in every report; they are listed as unpaired" + because);
  }
  bool any_results = false;
  for (const auto& r : reports) any_results = any_results || !r.results.empty();
  std::vector<std::size_t> no_results, no_gpu;
  std::map<std::string, std::vector<std::size_t>> no_gpu_by_reason;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    if (r.results.empty() && any_results) {
      no_results.push_back(i);
    } else if (!r.results.empty() && !r.gpu_ran) {
      no_gpu_by_reason[r.gpu_reason ? *r.gpu_reason : "no reason given"].push_back(i);
    }
  }
  per_host_weakness(no_results, labels, " has no results: only its environment can be compared",
                    " have no results: only their environments can be compared", out);
  for (const auto& [reason, hosts] : no_gpu_by_reason)
    per_host_weakness(hosts, labels, ": the GPU part did not run (" + reason + ")",
                      ": the GPU part did not run (" + reason + ")", out);

  std::map<std::size_t, int> skipped_here;
  for (const auto& c : outcomes.cases) {
    bool ran_somewhere = false;
    for (const auto& h : c.hosts)
      ran_somewhere = ran_somewhere || (h.present() && h.result->outcome_class != OutcomeClass::skipped);
    if (!ran_somewhere) continue;
    for (std::size_t i = 0; i < c.hosts.size(); ++i)
      if (c.hosts[i].present() && c.hosts[i].result->outcome_class == OutcomeClass::skipped) ++skipped_here[i];
  }
  if (!fleet_layout(reports.size())) {
    for (const auto& [i, n] : skipped_here)
      out.push_back(std::to_string(n) + " case(s) were skipped on " + labels[i] + " but ran on another host");
  } else if (!skipped_here.empty()) {
    std::vector<std::size_t> hosts;
    for (const auto& [i, n] : skipped_here) hosts.push_back(i);
    out.push_back("cases were skipped on " + host_count(hosts.size()) + " but ran on others (" +
                  example_names(hosts, labels) + ")");
  }
  return w;
}

Baseline majority_baseline(const std::vector<EnvRow>& env, const OutcomeDiff& outcomes,
                           std::size_t report_count) {
  Baseline b;
  if (report_count < 3) return b;
  b.applies = true;
  std::map<std::size_t, Outlier> by_report;
  for (const auto& c : outcomes.cases) {
    // A case that agrees (every host meets its expectation, or none fails) has no outlier,
    // whatever outcomes the expectation allows.
    if (c.kind == CaseKind::agree) continue;
    std::map<std::string, std::size_t> votes;
    std::size_t present = 0;
    std::vector<std::string> state(c.hosts.size());
    for (std::size_t i = 0; i < c.hosts.size(); ++i) {
      if (!c.hosts[i].present()) continue;
      state[i] = outcome_state(c.hosts[i]);
      ++votes[state[i]];
      ++present;
    }
    if (present < 3) continue;
    const auto top = std::max_element(votes.begin(), votes.end(),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
    if (top->second * 2 <= present || top->second == present) continue;  // no majority, or no outlier
    BaselineCase bc{c.key.label(), top->first, top->second, {}};
    for (std::size_t i = 0; i < c.hosts.size(); ++i) {
      if (!c.hosts[i].present() || state[i] == top->first) continue;
      bc.outliers.emplace_back(i, state[i]);
      by_report[i].report = i;
      by_report[i].cases.push_back(c.key.label());
    }
    b.cases.push_back(std::move(bc));
  }
  if (by_report.empty()) return b;
  std::vector<std::pair<const EnvRow*, RowMajority>> majorities;
  for (const auto& row : env)
    if (row.differs) majorities.emplace_back(&row, count_values(row));
  for (auto& [i, o] : by_report) {
    for (const auto& [row, m] : majorities) {
      const Text v = row->values[i];
      if (v && m.top_count * 2 > m.recorded && v != m.top)
        o.environment.push_back(row->field + " = " + *v + " (most hosts: " + *m.top + ")");
    }
    b.outliers.push_back(std::move(o));
  }
  return b;
}

VerdictParts decide_verdict(const OutcomeDiff& outcomes, const std::vector<Suspect>& suspects,
                            const Weaknesses& weaknesses, const Baseline& baseline,
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
  } else if (!weaknesses.mismatch.empty()) {
    v.status = report::VerdictStatus::config_mismatch;
  } else {
    v.status = report::VerdictStatus::same;
    v.reasons.push_back("every paired result agrees across " + std::to_string(labels.size()) +
                        " reports, or meets its expectation on every host");
  }
  if (v.status == report::VerdictStatus::host_specific)
    for (const auto& f : flaky) v.reasons.push_back(f);
  if (baseline.outliers.size() <= kExampleHosts) {
    for (const auto& o : baseline.outliers)
      v.reasons.push_back(labels[o.report] + " stands out from the majority in " +
                          std::to_string(o.cases.size()) + " case(s): " + join(o.cases, ", "));
  } else {
    std::vector<std::string> named;
    for (std::size_t k = 0; k < kExampleHosts; ++k) {
      const auto& o = baseline.outliers[k];
      named.push_back(fmt::format("{} ({} case(s))", labels[o.report], o.cases.size()));
    }
    v.reasons.push_back(fmt::format("{} stand out from the majority: {} and {} more (see the groups)",
                                    host_count(baseline.outliers.size()), join(named, ", "),
                                    baseline.outliers.size() - kExampleHosts));
  }
  if (common > 0)
    v.reasons.push_back(std::to_string(common) +
                        " case(s) fail the same way on every host: the code or the configuration, "
                        "not the machine");
  for (const auto& w : weaknesses.mismatch)
    v.reasons.push_back(std::string(v.status == report::VerdictStatus::config_mismatch ? "" : "comparison is weaker: ") + w);
  for (const auto& w : weaknesses.builds) v.reasons.push_back("comparison is weaker: " + w);
  return v;
}

}  // namespace cudadiag::compare

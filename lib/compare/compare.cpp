#include "compare/compare.h"

#include <stdexcept>

#include "util/exit_codes.h"

namespace cudadiag::compare {
namespace {

using report::json;

json per_label(const std::vector<std::optional<std::string>>& values,
               const std::vector<std::string>& labels) {
  json j = json::object();
  for (std::size_t i = 0; i < values.size(); ++i) j[labels[i]] = values[i] ? json(*values[i]) : json(nullptr);
  return j;
}

json labels_of(const std::vector<std::size_t>& idx, const std::vector<std::string>& labels) {
  json j = json::array();
  for (auto i : idx) j.push_back(labels[i]);
  return j;
}

json reports_json(const std::vector<LoadedReport>& reports) {
  json out = json::array();
  for (const auto& r : reports) {
    const auto doc = report::to_json(r.report);
    json item{{"file", r.file}, {"host", r.label}};
    item["hostname"] = r.report.host.value("hostname", json(nullptr));
    const auto& fields = env_fields();
    for (const auto& f : fields) {
      if (f.label == "driver version") item["driver"] = lookup_text(doc, f.pointers).value_or("");
      if (f.label == "model" && doc["devices"].is_array() && !doc["devices"].empty())
        item["gpu"] = lookup_text(doc["devices"][0], f.pointers).value_or("");
    }
    if (!item.contains("gpu")) item["gpu"] = "";
    item["schema_version"] = r.report.schema_version;
    item["command"] = r.report.invocation.value("command", "");
    item["results"] = r.report.results.size();
    item["verdict"] = report::to_string(r.report.verdict.status);
    out.push_back(std::move(item));
  }
  return out;
}

json case_json(const CaseAnalysis& c, const std::vector<std::string>& labels) {
  json hosts = json::object();
  for (std::size_t i = 0; i < c.hosts.size(); ++i) {
    const auto& h = c.hosts[i];
    if (!h.present) {
      hosts[labels[i]] = nullptr;
      continue;
    }
    json hj{{"outcome", h.outcome}, {"runs", h.runs}, {"failures", h.failures}};
    hj["error_code"] = h.error_code ? json(*h.error_code) : json(nullptr);
    if (!h.error_name.empty()) hj["error_name"] = h.error_name;
    hj["duration_ms"] = h.duration_ms;
    hosts[labels[i]] = std::move(hj);
  }
  return json{{"case", c.key.label()},
              {"case_id", c.key.case_id},
              {"params", json::parse(c.key.params)},
              {"profile", c.key.profile},
              {"device", c.key.device},
              {"kind", to_string(c.kind)},
              {"outcome_differs", c.outcome_differs},
              {"error_differs", c.error_differs},
              {"failing", labels_of(c.failing, labels)},
              {"passing", labels_of(c.passing, labels)},
              {"hosts", std::move(hosts)},
              {"explanation", c.explanation}};
}

json rate_tests_json(const OutcomeDiff& outcomes, const std::vector<std::string>& labels,
                     double alpha) {
  json out = json::array();
  for (const auto& c : outcomes.cases) {
    for (const auto& t : c.rate_tests) {
      out.push_back(json{{"case", c.key.label()},
                         {"a", labels[t.a]},
                         {"a_failures", t.failures_a},
                         {"a_runs", t.runs_a},
                         {"b", labels[t.b]},
                         {"b_failures", t.failures_b},
                         {"b_runs", t.runs_b},
                         {"test", "fisher_exact_two_sided"},
                         {"p_value", t.p},
                         {"alpha", alpha},
                         {"significant", t.significant},
                         {"conclusion", t.significant ? "significant" : "not significant"}});
    }
  }
  return out;
}

json baseline_json(const Baseline& b, const std::vector<std::string>& labels) {
  json cases = json::array();
  for (const auto& c : b.cases) {
    json outliers = json::object();
    for (const auto& [i, outcome] : c.outliers) outliers[labels[i]] = outcome;
    cases.push_back(json{{"case", c.case_label}, {"baseline", c.baseline},
                         {"hosts_agreeing", c.agreeing}, {"outliers", std::move(outliers)}});
  }
  json hosts = json::array();
  for (const auto& o : b.outliers)
    hosts.push_back(json{{"host", labels[o.report]}, {"cases", o.cases}, {"environment", o.environment}});
  return json{{"cases", std::move(cases)}, {"outliers", std::move(hosts)}};
}

}  // namespace

Comparison compare_reports(std::vector<LoadedReport>& reports, const CompareOptions& options) {
  if (reports.size() < 2) throw std::invalid_argument("compare_reports: needs two or more reports");
  label_reports(reports);
  Comparison c;
  for (const auto& r : reports) {
    c.labels.push_back(r.label);
    c.notes.insert(c.notes.end(), r.notes.begin(), r.notes.end());
  }
  c.environment = environment_rows(reports);
  c.pairing = pair_results(reports);
  c.outcomes = diff_outcomes(c.pairing, c.labels, options);
  c.notes.insert(c.notes.end(), c.outcomes.notes.begin(), c.outcomes.notes.end());
  bool any_results = false;
  for (const auto& r : reports) any_results = any_results || !r.report.results.empty();
  if (!any_results) c.notes.push_back("no report has results: only the environments are compared");
  c.suspects = rank_suspects(c.environment, c.outcomes, c.labels);
  c.weaknesses = config_weaknesses(reports, c.environment, c.pairing, c.outcomes);
  c.baseline = majority_baseline(c.environment, c.outcomes, reports.size());
  c.verdict = decide_verdict(c.outcomes, c.suspects, c.weaknesses, c.baseline, c.labels);
  return c;
}

json comparison_json(const std::vector<LoadedReport>& reports, const Comparison& c,
                     const CompareOptions& options) {
  const auto& labels = c.labels;
  json env_diff = json::array(), env_common = json::array();
  for (const auto& row : c.environment) {
    if (row.differs) {
      json item{{"field", row.field}, {"category", row.category}};
      if (!row.device.empty()) item["device"] = row.device;
      item["values"] = per_label(row.values, labels);
      env_diff.push_back(std::move(item));
    } else {
      std::string value;
      for (const auto& v : row.values)
        if (v) value = *v;
      env_common.push_back(json{{"field", row.field}, {"category", row.category}, {"value", value}});
    }
  }
  json outcome_diff = json::array();
  std::size_t paired = 0;
  for (const auto& cs : c.outcomes.cases) {
    ++paired;
    if (cs.kind != CaseKind::agree || cs.outcome_differs || cs.error_differs)
      outcome_diff.push_back(case_json(cs, labels));
  }
  json unpaired = json::array();
  for (const auto& u : c.pairing.unpaired) {
    unpaired.push_back(json{{"report", labels[u.report]}, {"file", reports[u.report].file},
                            {"case", u.key.label()}, {"case_id", u.key.case_id},
                            {"params", json::parse(u.key.params)}, {"profile", u.key.profile},
                            {"device", u.key.device}, {"missing_in", labels_of(u.missing_in, labels)},
                            {"hint", u.hint}});
  }
  json suspects = json::array();
  for (const auto& s : c.suspects) {
    suspects.push_back(json{{"field", s.field}, {"category", s.category}, {"score", s.score},
                            {"failing_hosts", labels_of(s.failing, labels)},
                            {"passing_hosts", labels_of(s.passing, labels)},
                            {"cases", s.cases}, {"why", s.why}});
  }
  json out{{"reports", reports_json(reports)},
           {"paired_results", paired},
           {"options", {{"time_factor", options.time_factor}, {"alpha", options.alpha}}},
           {"environment_diff", std::move(env_diff)},
           {"environment_common", std::move(env_common)},
           {"outcome_diff", std::move(outcome_diff)},
           {"unpaired", std::move(unpaired)},
           {"rate_tests", rate_tests_json(c.outcomes, labels, options.alpha)},
           {"suspects", std::move(suspects)},
           {"weaknesses", c.weaknesses},
           {"notes", c.notes}};
  if (c.baseline.applies) out["baseline"] = baseline_json(c.baseline, labels);
  return out;
}

report::Report comparison_report(const std::vector<LoadedReport>& reports, const Comparison& c,
                                 const CompareOptions& options, const std::vector<std::string>& argv) {
  auto r = report::new_report(argv, "compare");
  r.gpu = report::json{{"ran", false}, {"reason", "compare reads reports; it runs nothing on a GPU"}};
  r.extra["comparison"] = comparison_json(reports, c, options);
  r.verdict.status = c.verdict.status;
  r.verdict.reasons = c.verdict.reasons;
  report::finish_report(r);
  return r;
}


}  // namespace cudadiag::compare

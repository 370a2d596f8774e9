#include "compare/compare.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "compare/digest_reader.h"
#include "compare/gpu_standouts.h"
#include "compare/host_list.h"
#include "util/exit_codes.h"

namespace cudadiag::compare {
namespace {

using report::json;

// An object keyed by report label, built in one pass: labels are unique, so the
// ordered map's per-insert duplicate search (linear in its size) can be skipped.
template <typename ValueOf>
json by_label(const std::vector<std::string>& labels, ValueOf value_of) {
  json::object_t members;
  members.reserve(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) members.json::object_t::Container::emplace_back(labels[i], value_of(i));
  json j = json::object();
  j.get_ref<json::object_t&>() = std::move(members);
  return j;
}

json labels_of(const std::vector<std::size_t>& idx, const std::vector<std::string>& labels) {
  json j = json::array();
  for (auto i : idx) j.push_back(labels[i]);
  return j;
}

json text_or_null(Text t) { return t ? json(*t) : json(nullptr); }

// [{value, hosts, example}], most common first: what a fleet view shows of a row.
template <typename KeyOf, typename TextOf>
json tally(std::size_t n, const std::vector<std::string>& labels, KeyOf key_of, TextOf text_of) {
  std::map<decltype(key_of(0)), std::pair<std::size_t, std::size_t>> counts;  // key -> (hosts, first)
  for (std::size_t i = 0; i < n; ++i) {
    auto [it, inserted] = counts.try_emplace(key_of(i), 0, i);
    ++it->second.first;
  }
  std::vector<std::pair<std::size_t, std::size_t>> order;
  for (const auto& [key, v] : counts) order.push_back(v);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  json out = json::array();
  for (const auto& [hosts, first] : order)
    out.push_back(json{{"value", text_of(first)}, {"hosts", hosts}, {"example", labels[first]}});
  return out;
}

json reports_json(const Comparison& c) {
  json out = json::array();
  for (const auto& r : c.reports()) {
    json item{{"file", r.file}, {"host", r.label}};
    item["hostname"] = text_or_null(r.hostname);
    item["driver"] = r.driver ? *r.driver : "";
    item["gpu"] = r.gpu_model ? *r.gpu_model : "";
    item["devices_used"] = r.devices_used;
    item["schema_version"] = r.schema_version ? *r.schema_version : "";
    item["command"] = r.command ? *r.command : "";
    item["results"] = r.results.size();
    item["verdict"] = r.verdict ? *r.verdict : "";
    out.push_back(std::move(item));
  }
  return out;
}

json case_json(const CaseAnalysis& c, const std::vector<std::string>& labels) {
  json hosts = by_label(labels, [&](std::size_t i) -> json {
    const auto& h = c.hosts[i];
    if (!h.present()) return nullptr;
    const auto& r = *h.result;
    json hj{{"outcome", *r.outcome}, {"runs", h.runs}, {"failures", h.failures}, {"misses", h.misses}};
    hj["expectation_met"] = r.expectation_met ? json(*r.expectation_met) : json(nullptr);
    if (r.repeat_seconds) hj["seconds"] = *r.repeat_seconds;
    hj["error_code"] = r.error_code ? json(*r.error_code) : json(nullptr);
    if (r.error_name && !r.error_name->empty()) hj["error_name"] = *r.error_name;
    if (r.site) hj["site"] = *r.site;
    hj["duration_ms"] = r.duration_ms;
    return hj;
  });
  auto state = [&](std::size_t i) { return c.hosts[i].present() ? describe(c.hosts[i]) : std::string("not run"); };
  return json{{"case", c.key.label()},
              {"case_id", c.key.case_id},
              {"params", json::parse(c.key.params)},
              {"profile", c.key.profile},
              {"device", c.key.device},
              {"kind", to_string(c.kind)},
              {"outcome_differs", c.outcome_differs},
              {"error_differs", c.error_differs},
              {"site_differs", c.site_differs},
              {"failing", labels_of(c.failing, labels)},
              {"passing", labels_of(c.passing, labels)},
              {"states", tally(c.hosts.size(), labels, state, state)},
              {"hosts", std::move(hosts)},
              {"explanation", c.explanation}};
}

json rate_tests_json(const OutcomeDiff& outcomes, const std::vector<std::string>& labels) {
  json out = json::array();
  for (const auto& c : outcomes.cases) {
    for (const auto& t : c.rate_tests) {
      const std::string b = !t.against_rest                ? labels[t.b]
                            : t.counted == Counted::failures ? std::string("the hosts where it shows")
                                                             : "the other " + host_count(labels.size() - 1);
      out.push_back(json{{"case", c.key.label()},
                         {"a", labels[t.a]},
                         {"a_failures", t.failures_a},
                         {"a_runs", t.runs_a},
                         {"b", b},
                         {"b_failures", t.failures_b},
                         {"b_runs", t.runs_b},
                         {"against_rest", t.against_rest},
                         {"counted", to_string(t.counted)},
                         {"test", "fisher_exact_two_sided"},
                         {"p_value", t.p},
                         {"alpha", t.alpha},
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

void add_grouping(const Grouping& g, const std::vector<std::string>& labels, json& out) {
  json envs = json::array();
  for (const auto& e : g.environments)
    envs.push_back(json{{"id", e.id}, {"hosts", e.hosts.size()}, {"example", labels[e.hosts.front()]},
                        {"differences", e.differences}, {"members", labels_of(e.hosts, labels)}});
  json groups = json::array();
  for (const auto& hg : g.groups)
    groups.push_back(json{{"id", hg.id}, {"hosts", hg.hosts.size()}, {"example", labels[hg.hosts.front()]},
                          {"environment", g.environments[hg.environment].id}, {"verdict", hg.verdict},
                          {"outcomes", hg.outcomes}, {"members", labels_of(hg.hosts, labels)}});
  json tests = json::array();
  for (const auto& t : g.tests)
    tests.push_back(json{{"case", t.case_label},
                         {"environment", g.environments[t.environment].id},
                         {"failures", t.failures},
                         {"runs", t.runs},
                         {"rest_failures", t.rest_failures},
                         {"rest_runs", t.rest_runs},
                         {"test", "fisher_exact_two_sided"},
                         {"p_value", t.p},
                         {"alpha", t.alpha},
                         {"significant", t.significant},
                         {"conclusion", t.significant ? "significant" : "not significant"}});
  out["groups"] = std::move(groups);
  out["environment_groups"] = std::move(envs);
  out["group_tests"] = std::move(tests);
  json verdicts = json::object();
  for (const auto& [status, n] : g.verdicts) verdicts[status] = n;
  out["verdicts"] = std::move(verdicts);
}

}  // namespace

ReportSet digest_reports(const std::vector<LoadedReport>& reports) {
  ReportSet set;
  for (const auto& r : reports) set.reports.push_back(read_digest(report::to_json(r.report).dump(), r.file, *set.tables));
  label_digests(set.reports);
  return set;
}

Comparison compare_reports(std::vector<LoadedReport>& reports, const CompareOptions& options) {
  if (reports.size() < 2) throw std::invalid_argument("compare_reports: needs two or more reports");
  label_reports(reports);
  return compare_digests(digest_reports(reports), options);
}

namespace {

// Redacted reports whose tokens cannot be matched: different keys, random per-report
// keys, or some redacted and some not. "" when every report's tokens compare.
std::string token_note(const std::vector<ReportDigest>& reports) {
  using report::RedactionMode;
  std::map<std::optional<TokenScheme>, std::vector<std::string>> by_scheme;
  for (const auto& r : reports) by_scheme[r.redaction].push_back(r.label);
  if (by_scheme.size() == 1) {
    const auto& only = by_scheme.begin()->first;
    if (!only || only->mode != RedactionMode::per_report) return "";
  }
  std::string parts;
  for (const auto& [scheme, labels] : by_scheme) {
    std::string who;
    for (const auto& l : labels) who += (who.empty() ? "" : ", ") + l;
    std::string what = "not redacted";
    if (scheme) switch (scheme->mode) {
        case RedactionMode::per_report: what = "random tokens per report"; break;
        case RedactionMode::unkeyed: what = "unkeyed hashes (an older cudadiag)"; break;
        case RedactionMode::keyed: what = "key id " + scheme->key_id; break;
      }
    parts += (parts.empty() ? "" : "; ") + what + ": " + who;
  }
  return "redacted values are not comparable across these reports (" + parts +
         "): a host or GPU has a different token in each, so name-based rows differ; redact with one site key "
         "(--redact-key) to pair them";
}

}  // namespace

Comparison compare_digests(ReportSet set, const CompareOptions& options) {
  if (set.reports.size() < 2) throw std::invalid_argument("compare_digests: needs two or more reports");
  Comparison c;
  c.set = std::move(set);
  auto& reports = c.set.reports;
  label_digests(reports);
  c.notes = c.set.notes;
  for (const auto& r : reports) {
    c.labels.push_back(r.label);
    c.notes.insert(c.notes.end(), r.notes.begin(), r.notes.end());
  }
  if (const auto note = token_note(reports); !note.empty()) c.notes.push_back(note);
  c.environment = environment_rows(reports, c.set.tables->env_rows, c.set.tables->strings);
  c.pairing = pair_results(reports);
  c.outcomes = diff_outcomes(c.pairing, c.labels, options);
  c.notes.insert(c.notes.end(), c.outcomes.notes.begin(), c.outcomes.notes.end());
  bool any_results = false;
  for (const auto& r : reports) any_results = any_results || !r.results.empty();
  if (!any_results) c.notes.push_back("no report has results: only the environments are compared");
  c.suspects = rank_suspects(c.environment, c.outcomes, c.labels);
  auto weaknesses = config_weaknesses(reports, c.environment, c.pairing, c.outcomes);
  c.baseline = majority_baseline(c.environment, c.outcomes, reports.size());
  c.grouping = group_hosts(reports, c.environment, c.outcomes, options.alpha);
  c.verdict = decide_verdict(c.outcomes, c.suspects, weaknesses, c.baseline, c.labels);
  // A GPU whose failures the report's other GPUs do not share is named first, as repro does.
  const auto standouts = standout_reasons(reports);
  c.verdict.reasons.insert(c.verdict.reasons.begin(), standouts.begin(), standouts.end());
  c.weaknesses = std::move(weaknesses.mismatch);
  c.build_differences = std::move(weaknesses.builds);
  for (const auto& b : c.build_differences) c.notes.push_back("comparison is weaker: " + b);
  return c;
}

json comparison_json(const Comparison& c, const CompareOptions& options) {
  const auto& labels = c.labels;
  json env_diff = json::array(), env_common = json::array();
  for (const auto& row : c.environment) {
    if (row.differs) {
      json item{{"field", row.field}, {"category", row.category}};
      if (!row.device.empty()) item["device"] = row.device;
      auto value = [&](std::size_t i) { return row.values[i]; };
      item["summary"] = tally(labels.size(), labels, value, [&](std::size_t i) { return text_or_null(row.values[i]); });
      item["values"] = by_label(labels, [&](std::size_t i) { return text_or_null(row.values[i]); });
      env_diff.push_back(std::move(item));
    } else {
      std::string value;
      for (const auto v : row.values)
        if (v) value = *v;
      env_common.push_back(json{{"field", row.field}, {"category", row.category}, {"value", value}});
    }
  }
  json outcome_diff = json::array();
  for (const auto& cs : c.outcomes.cases)
    if (cs.kind != CaseKind::agree || cs.outcome_differs || cs.error_differs || cs.site_differs) outcome_diff.push_back(case_json(cs, labels));
  json unpaired = json::array();
  for (const auto& u : c.pairing.unpaired) {
    unpaired.push_back(json{{"case", u.key.label()}, {"case_id", u.key.case_id},
                            {"params", json::parse(u.key.params)}, {"profile", u.key.profile},
                            {"device", u.key.device}, {"present_in", labels_of(u.present_in, labels)},
                            {"missing_in", labels_of(u.missing_in, labels)}, {"hint", u.hint}});
  }
  json suspects = json::array();
  for (const auto& s : c.suspects) {
    suspects.push_back(json{{"field", s.field}, {"category", s.category}, {"score", s.score},
                            {"failing_hosts", labels_of(s.failing, labels)},
                            {"passing_hosts", labels_of(s.passing, labels)},
                            {"cases", s.cases}, {"why", s.why}});
  }
  json out{{"reports", reports_json(c)},
           {"paired_results", c.outcomes.cases.size()},
           {"cases_compared", c.outcomes.cases_compared},
           {"options", {{"time_factor", options.time_factor},
                        {"min_timed_runs", options.min_timed_runs},
                        {"min_timed_seconds", options.min_timed_seconds},
                        {"alpha", options.alpha},
                        {"correction", "holm over the cases compared"}}},
           {"environment_diff", std::move(env_diff)},
           {"environment_common", std::move(env_common)},
           {"outcome_diff", std::move(outcome_diff)},
           {"unpaired", std::move(unpaired)},
           {"rate_tests", rate_tests_json(c.outcomes, labels)},
           {"suspects", std::move(suspects)},
           {"weaknesses", c.weaknesses},
           {"build_differences", c.build_differences},
           {"notes", c.notes}};
  add_grouping(c.grouping, labels, out);
  if (c.baseline.applies) out["baseline"] = baseline_json(c.baseline, labels);
  return out;
}

report::Report comparison_report(const Comparison& c, const CompareOptions& options,
                                 const std::vector<std::string>& argv) {
  auto r = report::new_report(argv, "compare");
  r.gpu = {false, "compare reads reports; it runs nothing on a GPU"};
  r.extra.set("comparison", report::value_from_json(comparison_json(c, options)));
  r.verdict.status = c.verdict.status;
  r.verdict.reasons = c.verdict.reasons;
  report::finish_report(r);
  return r;
}


}  // namespace cudadiag::compare

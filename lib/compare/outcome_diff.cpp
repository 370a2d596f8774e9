#include "compare/outcome_diff.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "stats/fisher.h"

namespace cudadiag::compare {

bool is_failure(const report::Result& r) {
  // A skipped case did not run: it cannot have failed, whatever its expectation said.
  if (r.outcome == report::Outcome::skipped) return false;
  if (r.expectation_met) return !*r.expectation_met;
  // Unjudged: outcomes that mean "it went wrong" on a host; skipped, invalid_config and
  // host-only checks are decided before the GPU and say nothing about the machine.
  return report::is_failure(r.outcome) || r.outcome == report::Outcome::driver_disagrees;
}

const char* to_string(CaseKind k) {
  switch (k) {
    case CaseKind::agree: return "agree";
    case CaseKind::host_specific: return "host_specific";
    case CaseKind::flaky: return "flaky";
    case CaseKind::common_failure: return "common_failure";
  }
  return "agree";
}

namespace {


HostRun host_run(const report::Result* r) {
  HostRun h;
  if (!r) return h;
  h.present = true;
  h.outcome = std::string(report::to_string(r->outcome));
  if (r->error) {
    h.error_code = r->error->code;
    h.error_name = r->error->name;
  }
  h.duration_ms = r->duration_ms;
  if (r->repeats && r->repeats->runs > 0) {
    h.runs = r->repeats->runs;
    h.failures = std::clamp(r->repeats->failures, 0, h.runs);
    h.repeated = h.runs > 1;
  } else {
    h.runs = 1;
    h.failures = is_failure(*r) ? 1 : 0;
  }
  return h;
}

std::string describe(const HostRun& h) {
  std::string s = h.outcome;
  if (h.error_code) s += fmt::format(" {}", *h.error_code);
  if (!h.error_name.empty()) s += fmt::format(" {}", h.error_name);
  if (h.repeated) s += fmt::format(" ({}/{} failed)", h.failures, h.runs);
  return s;
}

std::string host_list(const std::vector<std::size_t>& idx, const std::vector<HostRun>& hosts,
                      const std::vector<std::string>& labels) {
  std::string s;
  for (auto i : idx) s += (s.empty() ? "" : ", ") + labels[i] + " (" + describe(hosts[i]) + ")";
  return s;
}

std::vector<RateTest> rate_tests(const std::vector<HostRun>& hosts, double alpha) {
  std::vector<RateTest> tests;
  bool any_repeated = false, rates_differ = false;
  for (const auto& h : hosts) {
    if (!h.present) continue;
    any_repeated = any_repeated || h.repeated;
    for (const auto& o : hosts)
      if (o.present && o.rate() != h.rate()) rates_differ = true;
  }
  if (!any_repeated || !rates_differ) return tests;
  for (std::size_t a = 0; a < hosts.size(); ++a) {
    for (std::size_t b = a + 1; b < hosts.size(); ++b) {
      const auto &ha = hosts[a], &hb = hosts[b];
      if (!ha.present || !hb.present) continue;
      RateTest t{a, b, ha.failures, ha.runs, hb.failures, hb.runs, 1.0, false};
      t.p = stats::fisher_two_sided(t.failures_a, t.runs_a, t.failures_b, t.runs_b);
      t.significant = t.p < alpha;
      tests.push_back(t);
    }
  }
  return tests;
}

const RateTest* find_test(const std::vector<RateTest>& tests, std::size_t x, std::size_t y) {
  for (const auto& t : tests)
    if ((t.a == x && t.b == y) || (t.a == y && t.b == x)) return &t;
  return nullptr;
}

std::string min_p_text(const std::vector<RateTest>& tests) {
  double p = 1.0;
  for (const auto& t : tests) p = std::min(p, t.p);
  return "Fisher p = " + fmt::format("{:.4g}", p);
}

// Every host either always or never fails: the split between hosts is clean.
void classify_deterministic(CaseAnalysis& c, const std::vector<std::size_t>& present,
                            const std::vector<std::string>& labels, double alpha) {
  for (auto i : present) (c.hosts[i].failures > 0 ? c.failing : c.passing).push_back(i);
  if (c.failing.empty()) {
    c.kind = CaseKind::agree;
    c.explanation = c.outcome_differs ? "outcomes differ but every host meets the expectation: " +
                                            host_list(present, c.hosts, labels)
                                      : "";
    return;
  }
  if (c.passing.empty()) {
    c.kind = c.error_differs ? CaseKind::host_specific : CaseKind::common_failure;
    c.explanation = c.error_differs
                        ? "fails on every host, with different errors: " +
                              host_list(present, c.hosts, labels)
                        : "fails the same way on every host (" + describe(c.hosts[present[0]]) +
                              "): the code or the configuration, not the machine";
    return;
  }
  c.kind = CaseKind::host_specific;
  c.explanation = "fails on " + host_list(c.failing, c.hosts, labels) + "; passes on " +
                  host_list(c.passing, c.hosts, labels);
  bool significant = false;
  for (const auto& t : c.rate_tests) significant = significant || t.significant;
  if (!c.rate_tests.empty() && !significant)
    c.explanation += " (every run agrees, but with so few runs this is not significant at α = " +
                     fmt::format("{:g}", alpha) + ", " + min_p_text(c.rate_tests) + ")";
}

// Some host fails only part of its runs: the rates decide.
void classify_by_rate(CaseAnalysis& c, const std::vector<std::size_t>& present,
                      const std::vector<std::string>& labels) {
  std::size_t lowest = present[0];
  for (auto i : present)
    if (c.hosts[i].rate() < c.hosts[lowest].rate()) lowest = i;
  bool significant = false;
  for (auto i : present) {
    const RateTest* t = i == lowest ? nullptr : find_test(c.rate_tests, i, lowest);
    if (t && t->significant && c.hosts[i].rate() > c.hosts[lowest].rate()) {
      significant = true;
      c.failing.push_back(i);
    }
  }
  if (significant) {
    for (auto i : present)
      if (std::find(c.failing.begin(), c.failing.end(), i) == c.failing.end()) c.passing.push_back(i);
    c.kind = CaseKind::host_specific;
    c.explanation = "fails significantly more often on " + host_list(c.failing, c.hosts, labels) +
                    " than on " + host_list(c.passing, c.hosts, labels) + " (" +
                    min_p_text(c.rate_tests) + ")";
    return;
  }
  for (auto i : present) (c.hosts[i].failures > 0 ? c.failing : c.passing).push_back(i);
  c.kind = CaseKind::flaky;
  c.explanation = "fails at a rate: " + host_list(present, c.hosts, labels) +
                  "; the difference between hosts is not significant (" +
                  min_p_text(c.rate_tests) + ")";
}

void timing_note(const CaseAnalysis& c, const std::vector<std::size_t>& present,
                 const std::vector<std::string>& labels, const CompareOptions& options,
                 std::vector<std::string>& notes) {
  std::size_t fast = present[0], slow = present[0];
  for (auto i : present) {
    if (c.hosts[i].duration_ms < c.hosts[fast].duration_ms) fast = i;
    if (c.hosts[i].duration_ms > c.hosts[slow].duration_ms) slow = i;
  }
  const double lo = c.hosts[fast].duration_ms, hi = c.hosts[slow].duration_ms;
  if (lo < options.min_time_ms || hi <= lo * options.time_factor) return;
  notes.push_back(c.key.label() + ": " + fmt::format("{:.1f}", hi) + " ms on " + labels[slow] +
                  " vs " + fmt::format("{:.1f}", lo) + " ms on " + labels[fast] + " (" +
                  fmt::format("{:.1f}", hi / lo) + "x, beyond the " +
                  fmt::format("{:g}", options.time_factor) + "x threshold)");
}

}  // namespace

OutcomeDiff diff_outcomes(const Pairing& pairing, const std::vector<std::string>& labels,
                          const CompareOptions& options) {
  OutcomeDiff out;
  bool single_run_split = false;
  for (const auto& pc : pairing.cases) {
    if (pc.present() < 2) continue;
    CaseAnalysis c;
    c.key = pc.key;
    std::vector<std::size_t> present;
    std::set<std::string> outcomes;
    std::set<int> codes;
    for (std::size_t i = 0; i < pc.per_report.size(); ++i) {
      c.hosts.push_back(host_run(pc.per_report[i]));
      if (!c.hosts[i].present) continue;
      present.push_back(i);
      outcomes.insert(c.hosts[i].outcome);
      if (c.hosts[i].error_code) codes.insert(*c.hosts[i].error_code);
    }
    c.outcome_differs = outcomes.size() > 1;
    c.error_differs = codes.size() > 1;
    c.rate_tests = rate_tests(c.hosts, options.alpha);

    bool deterministic = true;
    for (auto i : present) deterministic = deterministic && (c.hosts[i].failures == 0 ||
                                                             c.hosts[i].failures == c.hosts[i].runs);
    if (deterministic) {
      classify_deterministic(c, present, labels, options.alpha);
    } else {
      classify_by_rate(c, present, labels);
    }
    if (c.kind == CaseKind::host_specific && c.rate_tests.empty()) single_run_split = true;
    timing_note(c, present, labels, options, out.notes);
    out.cases.push_back(std::move(c));
  }
  if (single_run_split)
    out.notes.push_back(
        "some host-specific failures rest on a single run per host: repeat them (--repeat N) to "
        "tell a host-specific failure from a flaky one");
  return out;
}

}  // namespace cudadiag::compare

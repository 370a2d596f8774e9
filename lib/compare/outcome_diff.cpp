#include "compare/outcome_diff.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "compare/host_list.h"
#include "stats/fisher.h"

namespace cudadiag::compare {

bool is_failure(const ResultDigest& r) {
  // A skipped case did not run: it cannot have failed, whatever its expectation said.
  if (r.outcome_class == OutcomeClass::skipped) return false;
  if (r.expectation_met) return !*r.expectation_met;
  // Unjudged: outcomes that mean "it went wrong" on a host; skipped, invalid_config and
  // host-only checks are decided before the GPU and say nothing about the machine.
  return r.outcome_class == OutcomeClass::failure;
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

std::string describe(const HostRun& h) {
  if (!h.present()) return "—";
  const auto& r = *h.result;
  std::string s = *r.outcome;
  if (r.error_code) s += fmt::format(" {}", *r.error_code);
  if (r.error_name && !r.error_name->empty()) s += fmt::format(" {}", *r.error_name);
  if (h.repeated) s += fmt::format(" ({}/{} failed)", h.failures, h.runs);
  return s;
}

std::string outcome_state(const HostRun& h) {
  const auto& r = *h.result;
  return *r.outcome + (r.error_code ? " " + std::to_string(*r.error_code) : "");
}

namespace {

HostRun host_run(const ResultDigest* r) {
  HostRun h;
  if (!r) return h;
  h.result = r;
  if (r->repeat_runs && *r->repeat_runs > 0) {
    h.runs = *r->repeat_runs;
    h.failures = std::clamp(r->repeat_failures, 0, h.runs);
    h.repeated = h.runs > 1;
  } else {
    h.runs = 1;
    h.failures = is_failure(*r) ? 1 : 0;
  }
  return h;
}

// A few reports: every host with its outcome.
std::string host_list(const std::vector<std::size_t>& idx, const std::vector<HostRun>& hosts,
                      const std::vector<std::string>& labels) {
  std::string s;
  for (auto i : idx) s += (s.empty() ? "" : ", ") + labels[i] + " (" + describe(hosts[i]) + ")";
  return s;
}

// A fleet: "6 hosts: cuda_error 1 on 5 (a, b, c and 2 more), mismatch on 1 (x)".
constexpr std::size_t kStatesListed = 3;
std::string fleet_side(const std::vector<std::size_t>& idx, const std::vector<HostRun>& hosts,
                       const std::vector<std::string>& labels) {
  std::map<std::string, std::vector<std::size_t>> by_state;
  for (auto i : idx) by_state[describe(hosts[i])].push_back(i);
  std::vector<std::pair<std::string, std::vector<std::size_t>>> states(by_state.begin(), by_state.end());
  std::stable_sort(states.begin(), states.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < states.size() && k < kStatesListed; ++k) {
    const auto& [state, members] = states[k];
    parts.push_back(state + (states.size() > 1 ? " on " + std::to_string(members.size()) : "") + " (" +
                    example_names(members, labels) + ")");
  }
  if (states.size() > kStatesListed) parts.push_back(fmt::format("{} other outcomes", states.size() - kStatesListed));
  return host_count(idx.size()) + ": " + join(parts, ", ");
}

std::string side(const std::vector<std::size_t>& idx, const std::vector<HostRun>& hosts,
                 const std::vector<std::string>& labels) {
  return fleet_layout(labels.size()) ? fleet_side(idx, hosts, labels) : host_list(idx, hosts, labels);
}

std::string passing_side(const std::vector<std::size_t>& idx, const std::vector<HostRun>& hosts,
                         const std::vector<std::string>& labels) {
  return fleet_layout(labels.size()) ? host_count(idx.size()) : host_list(idx, hosts, labels);
}

// A few reports: every pair of hosts.
std::vector<RateTest> pairwise_tests(const std::vector<HostRun>& hosts, double alpha) {
  std::vector<RateTest> tests;
  for (std::size_t a = 0; a < hosts.size(); ++a) {
    for (std::size_t b = a + 1; b < hosts.size(); ++b) {
      const auto &ha = hosts[a], &hb = hosts[b];
      if (!ha.present() || !hb.present()) continue;
      RateTest t;
      t.a = a;
      t.b = b;
      t.failures_a = ha.failures;
      t.runs_a = ha.runs;
      t.failures_b = hb.failures;
      t.runs_b = hb.runs;
      t.p = stats::fisher_two_sided(t.failures_a, t.runs_a, t.failures_b, t.runs_b);
      t.alpha = alpha;
      t.significant = t.p < alpha;
      tests.push_back(t);
    }
  }
  return tests;
}

// A fleet: every host that failed at all against the others pooled, at alpha / hosts.
// Hosts with the same counts share one test.
std::vector<RateTest> against_rest_tests(const std::vector<HostRun>& hosts, double alpha) {
  long long total_failures = 0, total_runs = 0, present = 0;
  for (const auto& h : hosts) {
    if (!h.present()) continue;
    total_failures += h.failures;
    total_runs += h.runs;
    ++present;
  }
  std::vector<RateTest> tests;
  if (total_runs > INT_MAX) return tests;  // beyond the exact test's counts
  const double corrected = alpha / static_cast<double>(present);
  std::map<std::pair<int, int>, double> memo;
  for (std::size_t a = 0; a < hosts.size(); ++a) {
    const auto& h = hosts[a];
    if (!h.present() || h.failures == 0) continue;
    RateTest t;
    t.a = a;
    t.against_rest = true;
    t.failures_a = h.failures;
    t.runs_a = h.runs;
    t.failures_b = static_cast<int>(total_failures - h.failures);
    t.runs_b = static_cast<int>(total_runs - h.runs);
    const auto key = std::make_pair(h.failures, h.runs);
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, stats::fisher_two_sided(t.failures_a, t.runs_a, t.failures_b, t.runs_b)).first;
    t.p = it->second;
    t.alpha = corrected;
    const double rest_rate = t.runs_b > 0 ? static_cast<double>(t.failures_b) / t.runs_b : 0.0;
    t.significant = t.p < corrected && h.rate() > rest_rate;
    tests.push_back(t);
  }
  return tests;
}

std::vector<RateTest> rate_tests(const std::vector<HostRun>& hosts, double alpha, bool fleet) {
  bool any_repeated = false, rates_differ = false;
  const HostRun* first = nullptr;
  for (const auto& h : hosts) {
    if (!h.present()) continue;
    any_repeated = any_repeated || h.repeated;
    if (!first) first = &h;
    rates_differ = rates_differ || h.rate() != first->rate();
  }
  if (!any_repeated || !rates_differ) return {};
  return fleet ? against_rest_tests(hosts, alpha) : pairwise_tests(hosts, alpha);
}

const RateTest* find_test(const std::vector<RateTest>& tests, std::size_t x, std::size_t y) {
  for (const auto& t : tests)
    if (!t.against_rest && ((t.a == x && t.b == y) || (t.a == y && t.b == x))) return &t;
  return nullptr;
}

std::string min_p_text(const std::vector<RateTest>& tests) {
  double p = 1.0;
  for (const auto& t : tests) p = std::min(p, t.p);
  return "Fisher p = " + fmt::format("{:.4g}", p);
}

std::string correction_text(std::size_t hosts) {
  return fmt::format("each host against the other {}, Bonferroni-corrected for {} hosts", hosts - 1, hosts);
}

// Every host either always or never fails: the split between hosts is clean.
void classify_deterministic(CaseAnalysis& c, const std::vector<std::size_t>& present,
                            const std::vector<std::string>& labels, double alpha) {
  for (auto i : present) (c.hosts[i].failures > 0 ? c.failing : c.passing).push_back(i);
  if (c.failing.empty()) {
    c.kind = CaseKind::agree;
    c.explanation = c.outcome_differs ? "outcomes differ but every host meets the expectation: " +
                                            side(present, c.hosts, labels)
                                      : "";
    return;
  }
  if (c.passing.empty()) {
    c.kind = c.error_differs ? CaseKind::host_specific : CaseKind::common_failure;
    c.explanation = c.error_differs
                        ? "fails on every host, with different errors: " + side(present, c.hosts, labels)
                        : "fails the same way on every host (" + describe(c.hosts[present[0]]) +
                              "): the code or the configuration, not the machine";
    return;
  }
  c.kind = CaseKind::host_specific;
  c.explanation = "fails on " + side(c.failing, c.hosts, labels) + "; passes on " +
                  passing_side(c.passing, c.hosts, labels);
  bool significant = false;
  for (const auto& t : c.rate_tests) significant = significant || t.significant;
  if (!c.rate_tests.empty() && !significant)
    c.explanation += " (every run agrees, but with so few runs this is not significant at α = " +
                     fmt::format("{:g}", alpha) + ", " + min_p_text(c.rate_tests) + ")";
}

// A few reports, some host failing part of its runs: each host against the lowest.
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

// A fleet, some host failing part of its runs: each failing host against the rest.
void classify_fleet_by_rate(CaseAnalysis& c, const std::vector<std::size_t>& present,
                            const std::vector<std::string>& labels) {
  for (const auto& t : c.rate_tests)
    if (t.significant) c.failing.push_back(t.a);
  const auto tested = correction_text(present.size());
  if (!c.failing.empty()) {
    for (auto i : present)
      if (!std::binary_search(c.failing.begin(), c.failing.end(), i)) c.passing.push_back(i);
    c.kind = CaseKind::host_specific;
    c.explanation = "fails significantly more often on " + side(c.failing, c.hosts, labels) + " than on the other " +
                    host_count(c.passing.size()) + " (" + min_p_text(c.rate_tests) + ", " + tested + ")";
    return;
  }
  for (auto i : present) (c.hosts[i].failures > 0 ? c.failing : c.passing).push_back(i);
  c.kind = CaseKind::flaky;
  c.explanation = "fails at a rate on " + side(c.failing, c.hosts, labels) +
                  "; no host fails significantly more often than the rest (" + min_p_text(c.rate_tests) + ", " +
                  tested + ")";
}

// A fleet: the hosts slower than time_factor x the median (the fastest of thousands
// says nothing).
void fleet_timing_note(const CaseAnalysis& c, const std::vector<std::size_t>& present,
                       const std::vector<std::string>& labels, const CompareOptions& options,
                       std::vector<std::string>& notes) {
  auto ms = [&](std::size_t i) { return c.hosts[i].result->duration_ms; };
  std::vector<double> sorted;
  for (auto i : present) sorted.push_back(ms(i));
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (median < options.min_time_ms) return;
  std::vector<std::size_t> slow;
  for (auto i : present)
    if (ms(i) > median * options.time_factor) slow.push_back(i);
  if (slow.empty()) return;
  std::sort(slow.begin(), slow.end(), [&](std::size_t a, std::size_t b) { return ms(a) > ms(b); });
  notes.push_back(fmt::format("{}: {} took more than {:g}x the median {:.1f} ms (slowest: {}, {:.1f} ms)",
                              c.key.label(), host_count(slow.size()), options.time_factor, median,
                              labels[slow.front()], ms(slow.front())));
}

void timing_note(const CaseAnalysis& c, const std::vector<std::size_t>& present,
                 const std::vector<std::string>& labels, const CompareOptions& options,
                 std::vector<std::string>& notes) {
  if (fleet_layout(labels.size())) {
    fleet_timing_note(c, present, labels, options, notes);
    return;
  }
  std::size_t fast = present[0], slow = present[0];
  auto ms = [&](std::size_t i) { return c.hosts[i].result->duration_ms; };
  for (auto i : present) {
    if (ms(i) < ms(fast)) fast = i;
    if (ms(i) > ms(slow)) slow = i;
  }
  const double lo = ms(fast), hi = ms(slow);
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
  const bool fleet = fleet_layout(labels.size());
  bool single_run_split = false;
  for (const auto& pc : pairing.cases) {
    if (pc.present() < 2) continue;
    CaseAnalysis c;
    c.key = pc.key;
    std::vector<std::size_t> present;
    Text first_outcome = nullptr;
    std::set<int> codes;
    c.hosts.reserve(pc.per_report.size());
    for (std::size_t i = 0; i < pc.per_report.size(); ++i) {
      c.hosts.push_back(host_run(pc.per_report[i]));
      if (!c.hosts[i].present()) continue;
      present.push_back(i);
      const auto& r = *c.hosts[i].result;
      if (!first_outcome) first_outcome = r.outcome;
      c.outcome_differs = c.outcome_differs || r.outcome != first_outcome;
      if (r.error_code) codes.insert(*r.error_code);
    }
    c.error_differs = codes.size() > 1;
    c.rate_tests = rate_tests(c.hosts, options.alpha, fleet);

    bool deterministic = true;
    for (auto i : present) deterministic = deterministic && (c.hosts[i].failures == 0 ||
                                                             c.hosts[i].failures == c.hosts[i].runs);
    if (deterministic) {
      classify_deterministic(c, present, labels, options.alpha);
    } else if (fleet) {
      classify_fleet_by_rate(c, present, labels);
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

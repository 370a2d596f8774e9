#include "compare/outcome_diff.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "compare/host_list.h"
#include "stats/fisher.h"
#include "stats/holm.h"

namespace cudadiag::compare {

int miss_count(const ResultDigest& r, int runs, int failures) {
  if (!r.expectation_met) return failures;  // no expectation: every failed run counts
  if (*r.expectation_met) return 0;
  // Missed: the runs that went wrong, or every run when none did (an error was expected).
  return r.outcome_class == OutcomeClass::failure ? failures : runs;
}

bool is_failure(const ResultDigest& r) {
  // A skipped case did not run: it cannot have failed, whatever its expectation said.
  if (r.outcome_class == OutcomeClass::skipped) return false;
  return miss_count(r, 1, r.outcome_class == OutcomeClass::failure ? 1 : 0) > 0;
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

std::optional<CaseKind> parse_case_kind(std::string_view text) {
  for (const CaseKind k : {CaseKind::agree, CaseKind::host_specific, CaseKind::flaky, CaseKind::common_failure})
    if (text == to_string(k)) return k;
  return std::nullopt;
}

const char* to_string(Counted c) {
  return c == Counted::failures ? "failed runs (a failure expected at a rate)" : "runs that missed the expectation";
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

Judgement judge(const ResultDigest& r) {
  if (r.outcome_class == OutcomeClass::skipped) return Judgement::skipped;
  if (!r.expectation_met) return Judgement::unjudged;
  return *r.expectation_met ? Judgement::met : Judgement::unmet;
}

HostRun host_run(const ResultDigest* r) {
  HostRun h;
  if (!r) return h;
  h.result = r;
  h.judgement = judge(*r);
  if (r->repeat_runs && *r->repeat_runs > 0) {
    h.runs = *r->repeat_runs;
    h.failures = std::clamp(r->repeat_failures, 0, h.runs);
    h.repeated = h.runs > 1;
  } else {
    // No repeat statistics (an older build, a case decided on the host): one outcome was
    // seen, and it is what counts; the report's silence is not zero failures.
    h.runs = 1;
    h.failures = r->outcome_class == OutcomeClass::failure ? 1 : 0;
  }
  h.misses = h.judgement == Judgement::skipped ? 0 : miss_count(*r, h.runs, h.failures);
  return h;
}

std::string percent(int k, int n) { return fmt::format("{:.3g}%", n > 0 ? 100.0 * k / n : 0.0); }

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

// The expectation the hosts were judged by ("ok|mismatch"), as the first judged host records it.
std::string expectation_of(const CaseAnalysis& c, const std::vector<std::size_t>& compared) {
  for (auto i : compared) {
    const Text e = c.hosts[i].result->expected;
    if (c.hosts[i].judgement != Judgement::unjudged && e && !e->empty()) return *e;
  }
  return "";
}

RateTest make_test(std::size_t a, std::size_t b, bool against_rest, Counted counted, int fa, int na, int fb,
                   int nb) {
  RateTest t;
  t.a = a;
  t.b = b;
  t.against_rest = against_rest;
  t.counted = counted;
  t.failures_a = fa;
  t.runs_a = na;
  t.failures_b = fb;
  t.runs_b = nb;
  t.p = stats::fisher_two_sided(fa, na, fb, nb);
  return t;
}

// A few reports: every pair of hosts, on the runs that missed the expectation.
std::vector<RateTest> pairwise_tests(const std::vector<HostRun>& hosts, const std::vector<std::size_t>& compared) {
  std::vector<RateTest> tests;
  for (std::size_t x = 0; x < compared.size(); ++x) {
    for (std::size_t y = x + 1; y < compared.size(); ++y) {
      const auto &ha = hosts[compared[x]], &hb = hosts[compared[y]];
      tests.push_back(make_test(compared[x], compared[y], false, Counted::misses, ha.misses, ha.runs, hb.misses,
                                hb.runs));
    }
  }
  return tests;
}

// A fleet: every host that missed at all against the others pooled. Hosts with the
// same counts share one computation.
std::vector<RateTest> against_rest_tests(const std::vector<HostRun>& hosts, const std::vector<std::size_t>& compared) {
  long long total_misses = 0, total_runs = 0;
  for (auto i : compared) {
    total_misses += hosts[i].misses;
    total_runs += hosts[i].runs;
  }
  std::vector<RateTest> tests;
  if (total_runs > INT_MAX) return tests;  // beyond the exact test's counts
  std::map<std::pair<int, int>, double> memo;
  for (auto a : compared) {
    const auto& h = hosts[a];
    if (h.misses == 0) continue;
    RateTest t;
    t.a = a;
    t.against_rest = true;
    t.failures_a = h.misses;
    t.runs_a = h.runs;
    t.failures_b = static_cast<int>(total_misses - h.misses);
    t.runs_b = static_cast<int>(total_runs - h.runs);
    const auto key = std::make_pair(h.misses, h.runs);
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, stats::fisher_two_sided(t.failures_a, t.runs_a, t.failures_b, t.runs_b)).first;
    t.p = it->second;
    tests.push_back(t);
  }
  return tests;
}

// Met on every host, and the failure the case allows shows (repeated runs, some failed)
// on some hosts but never on others: each host where it never shows against the hosts
// where it does, pooled.
std::vector<RateTest> never_shows_tests(const std::vector<HostRun>& hosts, const std::vector<std::size_t>& compared) {
  long long shown = 0, shown_runs = 0;
  std::vector<std::size_t> silent;
  for (auto i : compared) {
    const auto& h = hosts[i];
    if (h.judgement != Judgement::met) return {};
    if (!h.repeated) continue;
    if (h.failures > 0) {
      shown += h.failures;
      shown_runs += h.runs;
    } else {
      silent.push_back(i);
    }
  }
  std::vector<RateTest> tests;
  if (shown == 0 || silent.empty() || shown_runs > INT_MAX) return tests;
  for (auto i : silent)
    tests.push_back(make_test(i, 0, true, Counted::failures, 0, hosts[i].runs, static_cast<int>(shown),
                              static_cast<int>(shown_runs)));
  return tests;
}

// Tests inside one case, and the factor its smallest p is multiplied by (Bonferroni
// inside the case) before Holm compares the cases with each other.
struct CasePlan {
  std::vector<std::size_t> compared;  // hosts that ran the case
  std::size_t within = 1;
};

std::string min_p_text(const std::vector<RateTest>& tests) {
  double p = 1.0;
  for (const auto& t : tests) p = std::min(p, t.p);
  return "Fisher p = " + fmt::format("{:.4g}", p);
}

std::string holm_text(std::size_t cases) {
  return fmt::format("Holm-corrected for {} case(s) compared", cases);
}

std::string correction_text(std::size_t hosts, std::size_t cases) {
  return fmt::format("each host against the other {}, Bonferroni-corrected for {} hosts and {}", hosts - 1, hosts,
                     holm_text(cases));
}

// Every host either always or never misses: the split between hosts is clean.
void classify_deterministic(CaseAnalysis& c, const std::vector<std::size_t>& compared,
                            const std::vector<std::string>& labels, double alpha, std::size_t family) {
  for (auto i : compared) (c.hosts[i].misses > 0 ? c.failing : c.passing).push_back(i);
  const std::string expected = expectation_of(c, compared);
  if (c.failing.empty()) {
    c.kind = CaseKind::agree;
    if (c.outcome_differs || c.error_differs)
      c.explanation = std::string(c.judged ? "outcomes differ, but every host meets the expectation" +
                                                 (expected.empty() ? std::string() : " (" + expected + ")")
                                           : "outcomes differ, but no host fails") +
                      ": " + side(compared, c.hosts, labels);
    return;
  }
  if (c.passing.empty()) {
    c.kind = c.error_differs ? CaseKind::host_specific : CaseKind::common_failure;
    c.explanation = c.error_differs
                        ? "fails on every host, with different errors: " + side(compared, c.hosts, labels)
                        : "fails the same way on every host (" + describe(c.hosts[compared[0]]) +
                              "): the code or the configuration, not the machine";
    return;
  }
  c.kind = CaseKind::host_specific;
  if (c.judged && !expected.empty()) {
    c.explanation = "misses its expectation (" + expected + ") on " + side(c.failing, c.hosts, labels) +
                    "; meets it on " + passing_side(c.passing, c.hosts, labels);
  } else {
    c.explanation = "fails on " + side(c.failing, c.hosts, labels) + "; passes on " +
                    passing_side(c.passing, c.hosts, labels);
  }
  bool significant = false;
  for (const auto& t : c.rate_tests) significant = significant || t.significant;
  if (!c.rate_tests.empty() && !significant)
    c.explanation += " (every run agrees, but with so few runs this is not significant at α = " +
                     fmt::format("{:g}", alpha) + ", " + min_p_text(c.rate_tests) + ", " + holm_text(family) + ")";
}

const RateTest* find_test(const std::vector<RateTest>& tests, std::size_t x, std::size_t y) {
  for (const auto& t : tests)
    if (!t.against_rest && ((t.a == x && t.b == y) || (t.a == y && t.b == x))) return &t;
  return nullptr;
}

// A few reports, some host missing part of its runs: each host against the lowest.
void classify_by_rate(CaseAnalysis& c, const std::vector<std::size_t>& compared,
                      const std::vector<std::string>& labels, std::size_t family) {
  std::size_t lowest = compared[0];
  for (auto i : compared)
    if (c.hosts[i].miss_rate() < c.hosts[lowest].miss_rate()) lowest = i;
  for (auto i : compared) {
    const RateTest* t = i == lowest ? nullptr : find_test(c.rate_tests, i, lowest);
    if (t && t->significant && c.hosts[i].miss_rate() > c.hosts[lowest].miss_rate()) c.failing.push_back(i);
  }
  if (!c.failing.empty()) {
    for (auto i : compared)
      if (std::find(c.failing.begin(), c.failing.end(), i) == c.failing.end()) c.passing.push_back(i);
    c.kind = CaseKind::host_specific;
    c.explanation = "fails significantly more often on " + host_list(c.failing, c.hosts, labels) + " than on " +
                    host_list(c.passing, c.hosts, labels) + " (" + min_p_text(c.rate_tests) + ", " +
                    holm_text(family) + ")";
    return;
  }
  for (auto i : compared) (c.hosts[i].misses > 0 ? c.failing : c.passing).push_back(i);
  c.kind = CaseKind::flaky;
  c.explanation = "fails at a rate: " + host_list(compared, c.hosts, labels) +
                  "; the difference between hosts is not significant (" + min_p_text(c.rate_tests) + ", " +
                  holm_text(family) + ")";
}

// A fleet, some host missing part of its runs: each failing host against the rest.
void classify_fleet_by_rate(CaseAnalysis& c, const std::vector<std::size_t>& compared,
                            const std::vector<std::string>& labels, std::size_t family) {
  for (const auto& t : c.rate_tests)
    if (t.significant) c.failing.push_back(t.a);
  const auto tested = correction_text(compared.size(), family);
  if (!c.failing.empty()) {
    for (auto i : compared)
      if (!std::binary_search(c.failing.begin(), c.failing.end(), i)) c.passing.push_back(i);
    c.kind = CaseKind::host_specific;
    c.explanation = "fails significantly more often on " + side(c.failing, c.hosts, labels) + " than on the other " +
                    host_count(c.passing.size()) + " (" + min_p_text(c.rate_tests) + ", " + tested + ")";
    return;
  }
  for (auto i : compared) (c.hosts[i].misses > 0 ? c.failing : c.passing).push_back(i);
  c.kind = CaseKind::flaky;
  c.explanation = "fails at a rate on " + side(c.failing, c.hosts, labels) +
                  "; no host fails significantly more often than the rest (" + min_p_text(c.rate_tests) + ", " +
                  tested + ")";
}

// Met everywhere, its failure shows on some hosts: the hosts where it never does,
// when that is significant, are named.
void classify_never_shows(CaseAnalysis& c, const std::vector<std::size_t>& compared,
                          const std::vector<std::string>& labels, std::size_t family) {
  for (const auto& t : c.rate_tests)
    if (t.significant) c.failing.push_back(t.a);
  if (c.failing.empty()) {
    c.kind = CaseKind::agree;
    return;
  }
  std::vector<std::size_t> showing;
  for (auto i : compared) {
    if (std::find(c.failing.begin(), c.failing.end(), i) == c.failing.end()) c.passing.push_back(i);
    if (c.hosts[i].repeated && c.hosts[i].failures > 0) showing.push_back(i);
  }
  c.kind = CaseKind::host_specific;
  const std::string expected = expectation_of(c, compared);
  c.explanation = "the failure it expects at a rate" + (expected.empty() ? std::string() : " (" + expected + ")") +
                  " never shows on " + side(c.failing, c.hosts, labels) + ", but does on " +
                  side(showing, c.hosts, labels) + " (" + min_p_text(c.rate_tests) + ", " + holm_text(family) + ")";
}

// Met on every host, failing at a rate on some: the rates, shown, never compared.
void expected_rate_note(const CaseAnalysis& c, const std::vector<std::size_t>& compared,
                        const std::vector<std::string>& labels, std::vector<std::string>& notes) {
  std::vector<std::size_t> rated;
  for (auto i : compared)
    if (c.hosts[i].repeated) rated.push_back(i);
  if (rated.empty()) return;
  const std::string expected = expectation_of(c, compared);
  std::string rates;
  if (!fleet_layout(labels.size())) {
    std::vector<std::string> parts;
    for (auto i : rated)
      parts.push_back(fmt::format("{} ({}/{}) on {}", percent(c.hosts[i].failures, c.hosts[i].runs),
                                  c.hosts[i].failures, c.hosts[i].runs, labels[i]));
    rates = join(parts, ", ");
  } else {
    std::vector<double> r;
    for (auto i : rated) r.push_back(c.hosts[i].failure_rate());
    std::sort(r.begin(), r.end());
    rates = fmt::format("{:.3g}% to {:.3g}% across {} (median {:.3g}%)", 100 * r.front(), 100 * r.back(),
                        host_count(rated.size()), 100 * r[r.size() / 2]);
  }
  notes.push_back(c.key.label() + ": failure rate " + rates + ": expected to fail at a rate" +
                  (expected.empty() ? std::string() : " (" + expected + ")") +
                  " and met on every host; rates depend on the GPU and its clocks, so they are not compared");
}

// Milliseconds per run inside the child, where the result timed enough runs to tell:
// never a result's duration_ms, which is mostly process and context start.
std::optional<double> per_run_ms(const HostRun& h, const CompareOptions& options) {
  if (!h.present()) return std::nullopt;
  const auto& r = *h.result;
  if (!r.repeat_seconds || !r.repeat_runs || *r.repeat_runs < options.min_timed_runs ||
      *r.repeat_seconds < options.min_timed_seconds)
    return std::nullopt;
  return *r.repeat_seconds * 1000.0 / *r.repeat_runs;
}

void timing_note(const CaseAnalysis& c, const std::vector<std::size_t>& compared,
                 const std::vector<std::string>& labels, const CompareOptions& options,
                 std::vector<std::string>& notes) {
  std::vector<std::pair<std::size_t, double>> timed;
  for (auto i : compared)
    if (const auto ms = per_run_ms(c.hosts[i], options)) timed.emplace_back(i, *ms);
  if (timed.size() < 2) return;
  const auto runs = [&](std::size_t i) { return *c.hosts[i].result->repeat_runs; };
  if (!fleet_layout(labels.size())) {
    const auto [fast, slow] = std::minmax_element(timed.begin(), timed.end(),
                                                  [](const auto& a, const auto& b) { return a.second < b.second; });
    if (slow->second <= fast->second * options.time_factor) return;
    notes.push_back(fmt::format(
        "{}: {:.4g} ms per run on {} vs {:.4g} ms on {} ({:.1f}x, beyond the {:g}x threshold; kernel time inside "
        "the child, {} and {} runs)",
        c.key.label(), slow->second, labels[slow->first], fast->second, labels[fast->first],
        slow->second / fast->second, options.time_factor, runs(slow->first), runs(fast->first)));
    return;
  }
  // A fleet: the hosts slower than time_factor x the median (the fastest of thousands says nothing).
  std::vector<double> sorted;
  for (const auto& [i, ms] : timed) sorted.push_back(ms);
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::vector<std::pair<std::size_t, double>> slow;
  for (const auto& t : timed)
    if (t.second > median * options.time_factor) slow.push_back(t);
  if (slow.empty()) return;
  const auto slowest = *std::max_element(slow.begin(), slow.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
  notes.push_back(fmt::format(
      "{}: {} took more than {:g}x the median {:.4g} ms per run (slowest: {}, {:.4g} ms; kernel time inside the "
      "child, {} hosts timed)",
      c.key.label(), host_count(slow.size()), options.time_factor, median, labels[slowest.first], slowest.second,
      timed.size()));
}

// Each host against its expectation, and the tests the case needs.
CaseAnalysis analyse_case(const PairedCase& pc, bool fleet, CasePlan& plan) {
  CaseAnalysis c;
  c.key = pc.key;
  Text first_outcome = nullptr;
  std::set<int> codes;
  c.hosts.reserve(pc.per_report.size());
  for (std::size_t i = 0; i < pc.per_report.size(); ++i) {
    c.hosts.push_back(host_run(pc.per_report[i]));
    const auto& h = c.hosts[i];
    if (!h.compared()) continue;
    plan.compared.push_back(i);
    const auto& r = *h.result;
    if (!first_outcome) first_outcome = r.outcome;
    c.outcome_differs = c.outcome_differs || r.outcome != first_outcome;
    if (r.error_code) codes.insert(*r.error_code);
    c.judged = c.judged || h.judgement == Judgement::met || h.judgement == Judgement::unmet;
  }
  c.error_differs = codes.size() > 1;
  {
    std::set<std::string> sites;  // hosts without a site (dumps not armed) say nothing here
    for (auto i : plan.compared)
      if (c.hosts[i].result->site) sites.insert(*c.hosts[i].result->site);
    c.site_differs = sites.size() > 1;
  }
  if (plan.compared.size() < 2) return c;
  bool all_met = true, any_repeated = false, intermittent = false, misses_differ = false;
  for (auto i : plan.compared) {
    const auto& h = c.hosts[i];
    all_met = all_met && h.judgement == Judgement::met;
    any_repeated = any_repeated || h.repeated;
    intermittent = intermittent || (h.repeated && h.failures > 0 && h.failures < h.runs);
    misses_differ = misses_differ || h.miss_rate() != c.hosts[plan.compared[0]].miss_rate();
  }
  c.expected_rate = all_met && intermittent;
  if (all_met) {
    c.rate_tests = never_shows_tests(c.hosts, plan.compared);
    plan.within = std::max<std::size_t>(1, c.rate_tests.size());
  } else if (any_repeated && misses_differ) {
    c.rate_tests = fleet ? against_rest_tests(c.hosts, plan.compared) : pairwise_tests(c.hosts, plan.compared);
    plan.within = fleet ? plan.compared.size() : std::max<std::size_t>(1, c.rate_tests.size());
  }
  return c;
}

// Holm over the cases compared: one p-value per tested case, its smallest,
// Bonferroni-corrected for the tests inside it; each test is then held to its case's
// level over those tests.
void holm_over_cases(std::vector<CaseAnalysis>& cases, const std::vector<CasePlan>& plans, std::size_t family,
                     double alpha) {
  std::vector<double> case_p;
  std::vector<std::size_t> tested;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto& tests = cases[k].rate_tests;
    if (tests.empty()) continue;
    double p = 1.0;
    for (const auto& t : tests) p = std::min(p, t.p);
    case_p.push_back(std::min(1.0, p * static_cast<double>(plans[k].within)));
    tested.push_back(k);
  }
  const auto decisions = stats::holm(case_p, family, alpha);
  for (std::size_t j = 0; j < tested.size(); ++j) {
    const double level = decisions[j].level / static_cast<double>(plans[tested[j]].within);
    for (auto& t : cases[tested[j]].rate_tests) {
      t.alpha = level;
      const double rest_rate = t.runs_b > 0 ? static_cast<double>(t.failures_b) / t.runs_b : 0.0;
      const double own_rate = t.runs_a > 0 ? static_cast<double>(t.failures_a) / t.runs_a : 0.0;
      // Against the rest, only a host that misses more often (or, never-shows, shows less) stands out.
      const bool direction = !t.against_rest || (t.counted == Counted::misses ? own_rate > rest_rate
                                                                             : own_rate < rest_rate);
      t.significant = decisions[j].significant && t.p < level && direction;
    }
  }
}

// The case's kind and sentence, from its hosts and its (corrected) tests.
void classify_case(CaseAnalysis& c, const std::vector<std::size_t>& compared, const std::vector<std::string>& labels,
                   double alpha, std::size_t family) {
  bool deterministic = true;
  for (auto i : compared)
    deterministic = deterministic && (c.hosts[i].misses == 0 || c.hosts[i].misses == c.hosts[i].runs);
  const bool never_shows = !c.rate_tests.empty() && c.rate_tests.front().counted == Counted::failures;
  if (never_shows) {
    classify_never_shows(c, compared, labels, family);
  } else if (deterministic) {
    classify_deterministic(c, compared, labels, alpha, family);
  } else if (fleet_layout(labels.size())) {
    classify_fleet_by_rate(c, compared, labels, family);
  } else {
    classify_by_rate(c, compared, labels, family);
  }
}

}  // namespace

OutcomeDiff diff_outcomes(const Pairing& pairing, const std::vector<std::string>& labels,
                          const CompareOptions& options) {
  OutcomeDiff out;
  const bool fleet = fleet_layout(labels.size());
  std::vector<CasePlan> plans;
  for (const auto& pc : pairing.cases) {
    if (pc.present() < 2) continue;
    CasePlan plan;
    out.cases.push_back(analyse_case(pc, fleet, plan));
    out.cases_compared += plan.compared.size() >= 2;
    plans.push_back(std::move(plan));
  }
  holm_over_cases(out.cases, plans, out.cases_compared, options.alpha);
  bool single_run_split = false;
  for (std::size_t k = 0; k < out.cases.size(); ++k) {
    auto& c = out.cases[k];
    const auto& compared = plans[k].compared;
    if (compared.size() < 2) continue;  // ran on one host at most: nothing to compare
    classify_case(c, compared, labels, options.alpha, out.cases_compared);
    if (c.site_differs) {
      std::string sites;
      for (auto i : compared)
        if (const auto& r = *c.hosts[i].result; r.site)
          sites += (sites.empty() ? "" : "; ") + labels[i] + ": " + *r.site;
      c.explanation += (c.explanation.empty() ? "" : "; ") + std::string("the fault site differs (") + sites + ")";
    }
    if (c.kind == CaseKind::agree && c.expected_rate) expected_rate_note(c, compared, labels, out.notes);
    if (c.kind == CaseKind::host_specific && c.rate_tests.empty()) single_run_split = true;
    timing_note(c, compared, labels, options, out.notes);
  }
  if (single_run_split)
    out.notes.push_back(
        "some host-specific failures rest on a single run per host: repeat them (--repeat N) to "
        "tell a host-specific failure from a flaky one");
  return out;
}

}  // namespace cudadiag::compare

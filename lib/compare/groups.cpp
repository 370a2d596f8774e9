#include "compare/groups.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "stats/fisher.h"

namespace cudadiag::compare {
namespace {

using Signature = std::vector<std::uint64_t>;

struct SignatureHash {
  std::size_t operator()(const Signature& s) const {
    std::uint64_t h = 1469598103934665603ULL;
    for (const auto v : s) h = (h ^ v) * 1099511628211ULL;
    return static_cast<std::size_t>(h);
  }
};

std::uint64_t cell_of(const void* p) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)); }

// Health counters group as zero or non-zero; every other value as itself.
const char kCounterZero = 0;
const char kCounterNonZero = 0;
std::uint64_t env_cell(const EnvRow& row, std::size_t i) {
  if (row.health_counter && row.values[i]) return cell_of(row.counter_totals[i] > 0 ? &kCounterNonZero : &kCounterZero);
  return cell_of(row.values[i]);
}

// What a host showed in one case, as groups compare it.
// Counts are the runs that missed the expectation: two healthy hosts whose race shows
// 70 and 75 times in 200 runs (met on both) are alike.
using State = std::tuple<bool, Text, int, Text, int, int>;  // present, outcome, code, name, misses, runs
State state_of(const HostRun& h) {
  if (!h.present()) return {false, nullptr, 0, nullptr, 0, 0};
  const auto& r = *h.result;
  return {true, r.outcome, r.error_code.value_or(INT_MIN), r.error_name, h.misses, h.runs};
}

// Index lists by signature, largest first (then by first member).
std::vector<std::vector<std::size_t>> partition(const std::vector<Signature>& sigs) {
  std::unordered_map<Signature, std::size_t, SignatureHash> slot;
  std::vector<std::vector<std::size_t>> parts;
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    const auto [it, inserted] = slot.emplace(sigs[i], parts.size());
    if (inserted) parts.emplace_back();
    parts[it->second].push_back(i);
  }
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return parts;
}

// Groups of the parts, numbered with `prefix` in order: E1, E2, ...
template <typename G>
std::vector<G> numbered(const std::vector<std::vector<std::size_t>>& parts, const char* prefix) {
  std::vector<G> groups(parts.size());
  for (std::size_t g = 0; g < parts.size(); ++g) {
    groups[g].id = prefix + std::to_string(g + 1);
    groups[g].hosts = parts[g];
  }
  return groups;
}

// The most common value of something per host: its first holder stands for it.
template <typename Key, typename Hash = std::hash<Key>>
std::size_t plurality_holder(std::size_t n, const std::function<Key(std::size_t)>& key_of) {
  std::unordered_map<Key, std::pair<std::size_t, std::size_t>, Hash> votes;  // key -> (count, first holder)
  std::size_t best = 0, best_count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto& v = votes.try_emplace(key_of(i), 0, i).first->second;
    if (++v.first > best_count) {
      best_count = v.first;
      best = v.second;
    }
  }
  return best;
}

struct StateHash {
  std::size_t operator()(const State& s) const {
    return SignatureHash{}({std::get<0>(s), cell_of(std::get<1>(s)), static_cast<std::uint64_t>(std::get<2>(s)),
                            cell_of(std::get<3>(s)), static_cast<std::uint64_t>(std::get<4>(s)),
                            static_cast<std::uint64_t>(std::get<5>(s))});
  }
};


std::string state_text(const HostRun& h) { return h.present() ? describe(h) : "not run"; }

void add_environment_groups(const std::vector<EnvRow>& env, std::size_t n, Grouping& out,
                            std::vector<std::size_t>& env_of_host) {
  std::vector<Signature> sigs(n);
  for (std::size_t i = 0; i < n; ++i) {
    sigs[i].reserve(env.size());
    for (const auto& row : env) sigs[i].push_back(env_cell(row, i));
  }
  // Per differing row, the host whose value most hosts share.
  std::vector<std::pair<const EnvRow*, std::size_t>> typical;
  for (const auto& row : env)
    if (row.differs)
      typical.emplace_back(&row, plurality_holder<std::uint64_t>(n, [&](std::size_t i) { return env_cell(row, i); }));
  env_of_host.assign(n, 0);
  out.environments = numbered<EnvironmentGroup>(partition(sigs), "E");
  for (std::size_t g = 0; g < out.environments.size(); ++g) {
    auto& e = out.environments[g];
    const std::size_t rep = e.hosts.front();
    for (const auto& [row, usual] : typical) {
      if (env_cell(*row, rep) == env_cell(*row, usual)) continue;
      e.differences.push_back(row->field + " = " + shown_text(row->values[rep]) + " (most hosts: " +
                              shown_text(row->values[usual]) + ")");
    }
    for (auto i : e.hosts) env_of_host[i] = g;
  }
}

void add_host_groups(const std::vector<ReportDigest>& reports, const OutcomeDiff& outcomes, const std::vector<std::size_t>& env_of_host, Grouping& out) {
  const std::size_t n = reports.size();
  std::vector<Signature> sigs(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& s = sigs[i];
    s.push_back(env_of_host[i]);
    s.push_back(cell_of(reports[i].verdict));
    for (const auto& c : outcomes.cases) {
      const auto [present, outcome, code, name, misses, runs] = state_of(c.hosts[i]);
      s.insert(s.end(), {present, cell_of(outcome), static_cast<std::uint64_t>(code), cell_of(name),
                         static_cast<std::uint64_t>(misses), static_cast<std::uint64_t>(runs)});
    }
  }
  std::vector<std::size_t> typical;
  for (const auto& c : outcomes.cases)
    typical.push_back(plurality_holder<State, StateHash>(n, [&](std::size_t i) { return state_of(c.hosts[i]); }));
  out.groups = numbered<HostGroup>(partition(sigs), "G");
  for (auto& hg : out.groups) {
    const std::size_t rep = hg.hosts.front();
    hg.environment = env_of_host[rep];
    hg.verdict = reports[rep].verdict ? *reports[rep].verdict : "";
    for (std::size_t k = 0; k < outcomes.cases.size(); ++k) {
      const auto& c = outcomes.cases[k];
      if (state_of(c.hosts[rep]) == state_of(c.hosts[typical[k]])) continue;
      hg.outcomes.push_back(c.key.label() + ": " + state_text(c.hosts[rep]) + " (most hosts: " +
                            state_text(c.hosts[typical[k]]) + ")");
    }
  }
}

// What is tested is the runs that missed the expectation (HostRun::misses): a race that
// meets its expectation everywhere is no lead, however its rate varies with the GPU.
void add_group_tests(const OutcomeDiff& outcomes, const std::vector<std::size_t>& env_of_host, double alpha,
                     Grouping& out) {
  const std::size_t groups = out.environments.size();
  if (groups < 2) return;
  const double corrected = alpha / static_cast<double>(groups);
  for (const auto& c : outcomes.cases) {
    std::vector<long long> failures(groups, 0), runs(groups, 0);
    long long total_failures = 0, total_runs = 0;
    bool some_pass = false;
    for (std::size_t i = 0; i < c.hosts.size(); ++i) {
      const auto& h = c.hosts[i];
      if (!h.compared()) continue;
      failures[env_of_host[i]] += h.misses;
      runs[env_of_host[i]] += h.runs;
      total_failures += h.misses;
      total_runs += h.runs;
      some_pass = some_pass || h.misses < h.runs;
    }
    if (total_failures == 0 || !some_pass || total_runs > INT_MAX) continue;
    for (std::size_t g = 0; g < groups; ++g) {
      if (failures[g] == 0) continue;
      GroupTest t;
      t.case_label = c.key.label();
      t.environment = g;
      t.failures = static_cast<int>(failures[g]);
      t.runs = static_cast<int>(runs[g]);
      t.rest_failures = static_cast<int>(total_failures - failures[g]);
      t.rest_runs = static_cast<int>(total_runs - runs[g]);
      t.p = stats::fisher_two_sided(t.failures, t.runs, t.rest_failures, t.rest_runs);
      t.alpha = corrected;
      const double rest_rate = t.rest_runs > 0 ? static_cast<double>(t.rest_failures) / t.rest_runs : 0.0;
      t.significant = t.p < corrected && static_cast<double>(t.failures) / t.runs > rest_rate;
      out.tests.push_back(std::move(t));
    }
  }
}

}  // namespace

Grouping group_hosts(const std::vector<ReportDigest>& reports, const std::vector<EnvRow>& env,
                     const OutcomeDiff& outcomes, double alpha) {
  Grouping out;
  for (const auto& r : reports) ++out.verdicts[r.verdict ? *r.verdict : "(none)"];
  if (reports.empty()) return out;
  std::vector<std::size_t> env_of_host;
  add_environment_groups(env, reports.size(), out, env_of_host);
  add_host_groups(reports, outcomes, env_of_host, out);
  add_group_tests(outcomes, env_of_host, alpha, out);
  return out;
}

}  // namespace cudadiag::compare

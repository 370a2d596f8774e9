#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "suite/plan.h"
#include "suite/suite.h"

using namespace cudadiag;
using namespace cudadiag::suite;

namespace {

Suite small_suite() {
  return parse_suite(R"({"cases": [
      {"id": "fault.ok-control", "profiles": ["default", "fence"]},
      {"id": "fault.oob-write", "profiles": ["default", "fence"]},
      {"kernel": "fault", "name": "ok-2", "params": {"reproducer": "ok-control"}, "expected": {"*": "ok"},
       "profiles": ["default", "fence"], "repeat": 4},
      {"id": "fault.hang", "profiles": ["default"], "repeat": 2},
      {"id": "fault.too-many-threads", "profiles": ["default"]}
    ]})",
                     "plan.json");
}

cases::Expectation E(const std::string& text) { return cases::Expectation::parse(text); }

const PlannedCase& run_of(const Plan& p, const Batch& b, size_t k = 0) { return p.runs[b.runs.at(k)]; }
std::string profile_of(const Plan& p, const Batch& b) { return run_of(p, b).profile.name; }

std::vector<const PlannedCase*> skipped(const Plan& p) {
  std::vector<const PlannedCase*> out;
  for (const auto& r : p.runs)
    if (r.venue == Venue::skipped) out.push_back(&r);
  return out;
}

PlanOptions two_gpus() {
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}, {1, "GPU-bbb", "H100"}};
  return o;
}

}  // namespace

TEST_CASE("plan: known-good cases share one child per profile and device", "[plan]") {
  const auto s = small_suite();
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  const auto p = make_plan(s, o);
  std::map<std::string, int> shared_per_profile;
  for (const auto& b : p.batches) {
    if (b.own_child) continue;
    const std::string profile = profile_of(p, b);
    ++shared_per_profile[profile];
    std::set<std::string> ids;
    for (size_t i : b.runs) ids.insert(p.runs[i].spec.case_id);
    // ok-control and ok-2 share; so does too-many-threads under default (a launch error
    // that leaves the context usable), and the overrun where it is expected to stay silent
    // (default: pooled memory); the fenced overrun and the hang do not.
    CHECK(ids.count("fault.oob-write") == (profile == "default" ? 1 : 0));
    CHECK(ids.count("fault.hang") == 0);
    CHECK(ids.count("fault.too-many-threads") == (profile == "default" ? 1 : 0));
    CHECK(ids.count("fault.ok-control") == 1);
    CHECK(ids.count("ok-2") == 1);
  }
  CHECK(shared_per_profile == std::map<std::string, int>{{"default", 1}, {"fence", 1}});
}

TEST_CASE("plan: faulting cases get their own child, once per repeat", "[plan]") {
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  const auto p = make_plan(small_suite(), o);
  int hang = 0, oob = 0;
  for (const auto& b : p.batches) {
    if (!b.own_child) continue;
    REQUIRE(b.runs.size() == 1);
    const auto& spec = run_of(p, b).spec;
    if (spec.case_id == "fault.hang") {
      ++hang;
      CHECK(b.deadline_ms == 3000);
      CHECK(spec.repeat == 1);
    }
    if (spec.case_id == "fault.oob-write") ++oob;
  }
  CHECK(hang == 2);  // repeat 2 -> two fresh children
  CHECK(oob == 1);   // fence only: under default the overrun is expected to stay silent
}

TEST_CASE("plan: repeats of shared cases run inside the child; allocators follow the profile", "[plan]") {
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  const auto p = make_plan(parse_suite(R"({"cases": [
      {"id": "fault.ok-control", "profiles": ["default", "nocache", "fence", "blocking+fence"], "repeat": 5},
      {"id": "fault.underrun-write", "profiles": ["fence"]}]})",
                                       "x.json"),
                           o);
  std::map<std::string, std::string> alloc;
  for (const auto& b : p.batches)
    for (size_t i : b.runs) {
      const auto& spec = p.runs[i].spec;
      alloc[spec.case_id + "/" + p.runs[i].profile.name] = std::string(profiles::to_string(spec.allocator));
      if (spec.case_id == "fault.ok-control") CHECK(spec.repeat == 5);
    }
  CHECK(alloc["fault.ok-control/default"] == "pool");
  CHECK(alloc["fault.ok-control/nocache"] == "direct");
  CHECK(alloc["fault.ok-control/fence"] == "fence-back");
  CHECK(alloc["fault.ok-control/blocking+fence"] == "fence-back");
  CHECK(alloc["fault.underrun-write/fence"] == "fence-front");  // the case's fence side
}

TEST_CASE("plan: case x profile x device x repeat", "[plan]") {
  const auto s = small_suite();
  const auto p = make_plan(s, two_gpus());
  // per device: ok-control 2 + oob 2 + ok-2 2 (repeat inside) + hang 2 + too-many-threads 1 = 9
  CHECK(p.child_runs() == 18);
  std::set<int> slots;
  for (const auto& b : p.batches) slots.insert(b.device_slot);
  CHECK(slots == std::set<int>{0, 1});
  // spec indices are unique across the plan
  std::set<int> idx;
  for (const auto& b : p.batches)
    for (size_t i : b.runs) CHECK(idx.insert(p.runs[i].spec.index).second);
  // and name their run
  for (size_t i = 0; i < p.runs.size(); ++i) CHECK(p.runs[i].spec.index == static_cast<int>(i));
}

TEST_CASE("plan: --profiles and --repeat override the suite", "[plan]") {
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  o.profiles_override = {profiles::parse_profile("blocking")};
  o.repeat_override = 3;
  const auto p = make_plan(small_suite(), o);
  for (const auto& b : p.batches) CHECK(profile_of(p, b) == "blocking");
  size_t hang_children = 0;
  for (const auto& b : p.batches)
    if (run_of(p, b).spec.case_id == "fault.hang") ++hang_children;
  CHECK(hang_children == 3);
}

TEST_CASE("plan: no GPU -> GPU runs skipped with the reason", "[plan]") {
  PlanOptions o;
  o.no_gpu_reason = "no NVIDIA driver";
  const auto p = make_plan(small_suite(), o);
  CHECK(p.batches.empty());
  REQUIRE(skipped(p).size() == 8);
  for (const auto* sk : skipped(p)) CHECK(sk->skip_reason == "no NVIDIA driver");
  CHECK(p.total_runs() == 8);
}

TEST_CASE("plan: sanitizer runs are alone, or skipped without compute-sanitizer", "[plan]") {
  auto s = parse_suite(R"({"cases": [{"id": "fault.ok-control", "profiles": ["sanitizer"]},
                                     {"id": "fault.oob-write", "profiles": ["sanitizer", "default"]}]})",
                       "s.json");
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  o.sanitizer_available = true;
  auto p = make_plan(s, o);
  size_t sanitizer_batches = 0;
  for (const auto& b : p.batches) {
    if (profile_of(p, b) == "sanitizer") {
      ++sanitizer_batches;
      CHECK(b.sanitizer);
      CHECK(b.own_child);
      CHECK(b.runs.size() == 1);
      CHECK(run_of(p, b).spec.allocator == profiles::Allocator::direct);
    }
  }
  CHECK(sanitizer_batches == 2);

  o.sanitizer_available = false;
  o.sanitizer_reason = "compute-sanitizer not found";
  p = make_plan(s, o);
  CHECK(skipped(p).size() == 2);
  CHECK(p.batches.size() == 1);
  CHECK(skipped(p)[0]->skip_reason == "compute-sanitizer not found");
}

TEST_CASE("plan: shared batches are bounded in size", "[plan]") {
  std::string cases;
  for (int i = 0; i < 20; ++i)
    cases += std::string(i ? "," : "") + R"({"id": "fault.ok-control", "name": "ok)" + std::to_string(i) + "\"}";
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  o.max_batch = 8;
  const auto p = make_plan(parse_suite("{\"cases\": [" + cases + "]}", "big.json"), o);
  REQUIRE(p.batches.size() == 3);
  CHECK(p.batches[0].runs.size() == 8);
  CHECK(p.batches[2].runs.size() == 4);
}

TEST_CASE("plan: needs_own_child", "[plan]") {
  cases::CaseDef good;
  CHECK_FALSE(needs_own_child(good, E("ok")));
  CHECK_FALSE(needs_own_child(good, E("silent")));
  CHECK_FALSE(needs_own_child(good, E("ok|mismatch")));
  CHECK_FALSE(needs_own_child(good, E("")));
  CHECK(needs_own_child(good, E("error:700")));
  CHECK(needs_own_child(good, E("timeout")));
  // Rejected before launch, or a launch error that is not sticky: the child goes on.
  CHECK_FALSE(needs_own_child(good, E("invalid_config")));
  CHECK_FALSE(needs_own_child(good, E("error:1|error:9")));
  CHECK_FALSE(needs_own_child(good, E("error:2")));
  CHECK_FALSE(needs_own_child(good, E("error:1|error:701")));
  // A sticky code, any error, or a class (which may hold sticky codes): alone.
  CHECK(needs_own_child(good, E("error:1|error:700")));
  CHECK(needs_own_child(good, E("error")));
  CHECK_FALSE(needs_own_child(good, E("error:launch_config")));  // no sticky error in that class
  CHECK(needs_own_child(good, E("error:memory_fault")));
  CHECK(needs_own_child(good, E("error:719|error:715")));
  CHECK(needs_own_child(good, E("error:999999")));  // unknown code: assume sticky
  cases::CaseDef bad;
  bad.expects_fault = true;
  // Known-bad, expected to stay silent or to fail without a sticky error: shares a child.
  CHECK_FALSE(needs_own_child(bad, E("silent")));
  CHECK_FALSE(needs_own_child(bad, E("ok|mismatch")));
  CHECK_FALSE(needs_own_child(bad, E("error:1")));
  // Expected to fault, to hang, or with no expectation at all: alone.
  CHECK(needs_own_child(bad, E("error:700")));
  CHECK(needs_own_child(bad, E("timeout")));
  CHECK(needs_own_child(bad, E("")));
}

TEST_CASE("plan: an expectation keeps the context as the taxonomy's sticky flag says", "[plan]") {
  CHECK(E("ok|mismatch").keeps_context());
  // A class keeps the context when none of its errors is sticky.
  CHECK(E("error:invalid_value|error:1").keeps_context());
  CHECK_FALSE(E("error:memory_fault").keeps_context());
  CHECK_FALSE(E("error:no_such_class").keeps_context());
  CHECK(E("error:701").keeps_context());
  CHECK_FALSE(E("error:700").keeps_context());
  CHECK_FALSE(E("error:716").keeps_context());
  CHECK_FALSE(E("timeout").keeps_context());
  CHECK_FALSE(E("any").keeps_context());
  CHECK_THROWS_AS(E("error:"), std::invalid_argument);
}

TEST_CASE("plan: batches run longest first; a hang's child gets a short kill grace", "[plan]") {
  const auto s = parse_suite(R"({"cases": [
      {"id": "fault.ok-control", "profiles": ["default"]},
      {"id": "fault.oob-write", "profiles": ["fence"]},
      {"id": "fault.hang", "profiles": ["default"], "deadline_ms": 1200},
      {"kernel": "fault", "name": "ok-many", "params": {"reproducer": "ok-control"}, "expected": {"*": "ok"},
       "profiles": ["nocache"], "repeat": 20}
    ]})",
                            "order.json");
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  const auto p = make_plan(s, o);
  REQUIRE(p.batches.size() == 4);
  // The hang (its deadline) first, then the repeated shared batch, then the short ones.
  CHECK(run_of(p, p.batches[0]).spec.case_id == "fault.hang");
  CHECK(p.batches[0].grace_ms == kTimeoutCaseGraceMs);
  CHECK(p.batches[0].deadline_ms == 1200);
  CHECK(p.batches[0].est_cost_ms >= 1200);
  CHECK(run_of(p, p.batches[1]).spec.case_id == "ok-many");
  for (size_t i = 1; i < p.batches.size(); ++i) {
    CHECK(p.batches[i - 1].est_cost_ms >= p.batches[i].est_cost_ms);
    CHECK(p.batches[i].grace_ms == 0);  // the run's default grace
  }
}

TEST_CASE("plan: cost estimate grows with the attention sequence, repeats and the sanitizer", "[plan]") {
  auto cost = [](int seq_len, int repeat, bool sanitizer) {
    const auto s = parse_suite(R"({"cases": [{"kernel": "attention", "params": {"seq_len": )" + std::to_string(seq_len) +
                                   R"(}, "expected": {"*": "ok"}, "repeat": )" + std::to_string(repeat) + "}]}",
                               "cost.json");
    PlanOptions o;
    o.devices = {{0, "GPU-aaa", "H100"}};
    Plan p = make_plan(s, o);
    p.batches.at(0).sanitizer = sanitizer;
    return estimate_cost_ms(p.batches.at(0), p);
  };
  CHECK(cost(512, 1, false) > cost(64, 1, false));
  CHECK(cost(64, 10, false) > cost(64, 1, false));
  CHECK(cost(64, 1, true) > cost(64, 1, false));
  const auto hang = parse_suite(R"({"cases": [{"id": "fault.hang", "deadline_ms": 1200}]})", "hang.json");
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  const Plan p = make_plan(hang, o);
  CHECK(estimate_cost_ms(p.batches.at(0), p) >= 1200);
}

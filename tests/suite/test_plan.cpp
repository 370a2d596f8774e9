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
    ++shared_per_profile[b.profile];
    std::set<std::string> ids;
    for (const auto& spec : b.specs) ids.insert(spec.case_id);
    // ok-control and ok-2 share; so does too-many-threads under default (a launch error
    // that leaves the context usable), and the overrun where it is expected to stay silent
    // (default: pooled memory); the fenced overrun and the hang do not.
    CHECK(ids.count("fault.oob-write") == (b.profile == "default" ? 1 : 0));
    CHECK(ids.count("fault.hang") == 0);
    CHECK(ids.count("fault.too-many-threads") == (b.profile == "default" ? 1 : 0));
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
    REQUIRE(b.specs.size() == 1);
    if (b.specs[0].case_id == "fault.hang") {
      ++hang;
      CHECK(b.deadline_ms == 3000);
      CHECK(b.specs[0].repeat == 1);
    }
    if (b.specs[0].case_id == "fault.oob-write") ++oob;
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
    for (const auto& spec : b.specs) {
      alloc[spec.case_id + "/" + b.profile] = spec.allocator;
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
    for (const auto& spec : b.specs) CHECK(idx.insert(spec.index).second);
}

TEST_CASE("plan: --profiles and --repeat override the suite", "[plan]") {
  PlanOptions o;
  o.devices = {{0, "GPU-aaa", "H100"}};
  o.profiles_override = {"blocking"};
  o.repeat_override = 3;
  const auto p = make_plan(small_suite(), o);
  for (const auto& b : p.batches) CHECK(b.profile == "blocking");
  size_t hang_children = 0;
  for (const auto& b : p.batches)
    if (b.specs[0].case_id == "fault.hang") ++hang_children;
  CHECK(hang_children == 3);
}

TEST_CASE("plan: no GPU -> GPU runs skipped with the reason", "[plan]") {
  PlanOptions o;
  o.no_gpu_reason = "no NVIDIA driver";
  const auto p = make_plan(small_suite(), o);
  CHECK(p.batches.empty());
  REQUIRE(p.skipped.size() == 8);
  for (const auto& sk : p.skipped) CHECK(sk.reason == "no NVIDIA driver");
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
    if (b.profile == "sanitizer") {
      ++sanitizer_batches;
      CHECK(b.sanitizer);
      CHECK(b.own_child);
      CHECK(b.specs.size() == 1);
      CHECK(b.specs[0].allocator == "direct");
    }
  }
  CHECK(sanitizer_batches == 2);

  o.sanitizer_available = false;
  o.sanitizer_reason = "compute-sanitizer not found";
  p = make_plan(s, o);
  CHECK(p.skipped.size() == 2);
  CHECK(p.batches.size() == 1);
  CHECK(p.skipped[0].reason == "compute-sanitizer not found");
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
  CHECK(p.batches[0].specs.size() == 8);
  CHECK(p.batches[2].specs.size() == 4);
}

TEST_CASE("plan: needs_own_child", "[plan]") {
  cases::CaseDef good;
  CHECK_FALSE(needs_own_child(good, "ok"));
  CHECK_FALSE(needs_own_child(good, "silent"));
  CHECK_FALSE(needs_own_child(good, "ok|mismatch"));
  CHECK_FALSE(needs_own_child(good, ""));
  CHECK(needs_own_child(good, "error:700"));
  CHECK(needs_own_child(good, "timeout"));
  // Rejected before launch, or a launch error that is not sticky: the child goes on.
  CHECK_FALSE(needs_own_child(good, "invalid_config"));
  CHECK_FALSE(needs_own_child(good, "error:1|error:9"));
  CHECK_FALSE(needs_own_child(good, "error:2"));
  CHECK_FALSE(needs_own_child(good, "error:1|error:701"));
  // A sticky code, any error, or a class (which may hold sticky codes): alone.
  CHECK(needs_own_child(good, "error:1|error:700"));
  CHECK(needs_own_child(good, "error"));
  CHECK_FALSE(needs_own_child(good, "error:launch_config"));  // no sticky error in that class
  CHECK(needs_own_child(good, "error:memory_fault"));
  CHECK(needs_own_child(good, "error:719|error:715"));
  CHECK(needs_own_child(good, "error:999999"));  // unknown code: assume sticky
  cases::CaseDef bad;
  bad.expects_fault = true;
  // Known-bad, expected to stay silent or to fail without a sticky error: shares a child.
  CHECK_FALSE(needs_own_child(bad, "silent"));
  CHECK_FALSE(needs_own_child(bad, "ok|mismatch"));
  CHECK_FALSE(needs_own_child(bad, "error:1"));
  // Expected to fault, to hang, or with no expectation at all: alone.
  CHECK(needs_own_child(bad, "error:700"));
  CHECK(needs_own_child(bad, "timeout"));
  CHECK(needs_own_child(bad, ""));
}

TEST_CASE("plan: expectation_keeps_context follows the taxonomy's sticky flag", "[plan]") {
  CHECK(expectation_keeps_context("ok|mismatch"));
  // A class keeps the context when none of its errors is sticky.
  CHECK(expectation_keeps_context("error:invalid_value|error:1"));
  CHECK_FALSE(expectation_keeps_context("error:memory_fault"));
  CHECK_FALSE(expectation_keeps_context("error:no_such_class"));
  CHECK(expectation_keeps_context("error:701"));
  CHECK_FALSE(expectation_keeps_context("error:700"));
  CHECK_FALSE(expectation_keeps_context("error:716"));
  CHECK_FALSE(expectation_keeps_context("timeout"));
  CHECK_FALSE(expectation_keeps_context("any"));
  CHECK_FALSE(expectation_keeps_context("error:"));
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
  CHECK(p.batches[0].specs[0].case_id == "fault.hang");
  CHECK(p.batches[0].grace_ms == kTimeoutCaseGraceMs);
  CHECK(p.batches[0].deadline_ms == 1200);
  CHECK(p.batches[0].est_cost_ms >= 1200);
  CHECK(p.batches[1].specs[0].case_id == "ok-many");
  for (size_t i = 1; i < p.batches.size(); ++i) {
    CHECK(p.batches[i - 1].est_cost_ms >= p.batches[i].est_cost_ms);
    CHECK(p.batches[i].grace_ms == 0);  // the run's default grace
  }
}

TEST_CASE("plan: cost estimate grows with the attention sequence, repeats and the sanitizer", "[plan]") {
  Batch small;
  cases::CaseSpec a;
  a.kernel = "attention";
  a.params = {{"seq_len", 64}};
  small.specs = {a};
  Batch big = small;
  big.specs[0].params = {{"seq_len", 512}};
  CHECK(estimate_cost_ms(big, {"ok"}) > estimate_cost_ms(small, {"ok"}));
  Batch repeated = small;
  repeated.specs[0].repeat = 10;
  CHECK(estimate_cost_ms(repeated, {"ok"}) > estimate_cost_ms(small, {"ok"}));
  Batch san = small;
  san.sanitizer = true;
  CHECK(estimate_cost_ms(san, {"ok"}) > estimate_cost_ms(small, {"ok"}));
  Batch hang;
  hang.deadline_ms = 1200;
  cases::CaseSpec h;
  h.kernel = "fault";
  hang.specs = {h};
  CHECK(estimate_cost_ms(hang, {"timeout"}) >= 1200);
}

// repro/health.json: the suite a node health check runs (scripts/slurm/cudadiag-healthcheck).
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "suite/plan.h"
#include "suite/suite.h"

using namespace cudadiag;

namespace {

std::string expectation(const suite::SuiteCase& c, const profiles::Profile& profile) {
  return cases::expectation_text(c.def, profile.name);
}

}  // namespace

TEST_CASE("health suite: a subset of the default suite, run as the default suite runs it", "[suite][health]") {
  const auto health = suite::load_suite("health");
  const auto def = suite::load_suite("default");
  std::map<std::string, std::set<std::string>> default_profiles;
  for (const auto& c : def.cases)
    for (const auto& p : c.profiles) default_profiles[c.def.id].insert(p.name);
  for (const auto& c : health.cases) {
    INFO(c.def.id);
    REQUIRE(default_profiles.count(c.def.id) == 1);
    for (const auto& p : c.profiles) CHECK(default_profiles[c.def.id].count(p.name) == 1);
    CHECK(c.repeat == 1);
  }
}

TEST_CASE("health suite: nothing slow, nothing that crashes or hangs a child", "[suite][health]") {
  const auto health = suite::load_suite("health");
  for (const auto& c : health.cases) {
    for (const auto& p : c.profiles) {
      INFO(c.def.id << " [" << p.name << "]");
      const auto e = expectation(c, p);
      CHECK(e.find("timeout") == std::string::npos);
      CHECK(e.find("710") == std::string::npos);  // device asserts
      CHECK(e.find("719") == std::string::npos);  // traps
      CHECK(e.find("716") == std::string::npos);  // misaligned addresses
    }
  }
  // On one GPU: a handful of children, a few seconds even one at a time.
  suite::PlanOptions opts;
  opts.devices = {{0, "GPU-00000000-0000-0000-0000-000000000000", "NVIDIA H100 80GB HBM3"}};
  const auto plan = suite::make_plan(health, opts);
  double total_ms = 0;
  for (const auto& b : plan.batches) total_ms += b.est_cost_ms;
  CHECK(plan.batches.size() <= 6);
  CHECK(total_ms < 6000);
  CHECK(plan.count(suite::Venue::skipped) == 0);
}

TEST_CASE("health suite: catches what makes a machine bad", "[suite][health]") {
  const auto health = suite::load_suite("health");
  std::set<std::string> families_expected_ok, fence_catches;
  bool driver_check = false;
  for (const auto& c : health.cases) {
    for (const auto& p : c.profiles) {
      const auto e = expectation(c, p);
      if (e == "ok" && !c.def.host_only) families_expected_ok.insert(std::string(cases::to_string(c.def.family)));
      if (p.name == "fence" && e.find("memory_fault") != std::string::npos) fence_catches.insert(c.def.id);
      if (c.def.family == cases::Family::tma && !c.def.host_only && e.find("error") != std::string::npos)
        driver_check = true;
    }
  }
  // A known-good kernel of every GPU family must pass ...
  CHECK(families_expected_ok == std::set<std::string>{"attention", "fault", "index_select", "tma"});
  // ... a one-element overrun must fault under the fence (the driver's VMM works) ...
  CHECK(fence_catches.count("fault.oob-write") == 1);
  // ... and the driver must refuse the descriptor it refuses on a healthy machine.
  CHECK(driver_check);
}

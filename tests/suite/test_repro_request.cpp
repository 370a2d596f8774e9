// repro's request: the options (typed by the CLI) and what the parent knows of itself
// resolved once into the suite, the plan and how the children run.
#include <catch2/catch.hpp>

#include <map>

#include "host/host_facts.h"
#include "profiles/profile.h"
#include "suite/device_selection.h"
#include "suite/repro_request.h"
#include "util/errors.h"

using namespace cudadiag;
using report::json;

namespace {

host::HostFacts gpus(int n) {
  json devices = json::array();
  for (int i = 0; i < n; ++i) devices.push_back(json{{"index", i}, {"uuid", "GPU-" + std::to_string(i)}, {"name", "H200"}});
  return host::host_facts_from(json::object(), json{{"nvml", {{"available", false}}}},
                               json{{"available", true}, {"status", n == 0 ? "no_device" : "ok"}, {"reason", ""},
                                    {"devices", devices}},
                               {});
}

struct World {
  int gpus = 2;
  int host_facts_gathered = 0;
  std::map<std::string, std::string> vars;
  evidence::Parent parent() {
    evidence::Parent p;
    p.self_exe = "/opt/cudadiag/bin/cudadiag";
    p.cpus = 64;
    p.getenv = [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
    p.host_facts = [this] {
      ++host_facts_gathered;
      return ::gpus(gpus);
    };
    return p;
  }
};

std::string usage_error_of(const suite::Args& a, const evidence::Parent& p) {
  try {
    (void)suite::resolve_request(a, p);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("repro request: suite, plan, devices and children resolved once", "[repro_request]") {
  World w;
  suite::Args a;
  a.suite = "health";
  a.timeout_s = 2.5;
  CHECK(a.coredump);  // armed unless --no-coredump
  const auto req = suite::resolve_request(a, w.parent());
  CHECK(w.host_facts_gathered == 1);
  CHECK(req.suite.name == "health");
  REQUIRE(req.plan_options.devices.size() == 2);
  CHECK(req.run.devices.size() == 2);
  CHECK(req.plan.total_runs() > 0);
  CHECK(req.facts.jobs == suite::default_jobs(2, 64));
  CHECK(req.run.jobs == req.facts.jobs);
  CHECK(req.run.self_exe == "/opt/cudadiag/bin/cudadiag");
  CHECK(req.run.default_deadline == std::chrono::milliseconds(2500));
  CHECK(req.run.coredump);
  CHECK_FALSE(req.plan_options.seed.has_value());

  a.jobs = 3;
  a.devices = "1";
  a.seed = "0x10";
  const auto narrowed = suite::resolve_request(a, w.parent());
  CHECK(narrowed.run.jobs == 3);
  REQUIRE(narrowed.run.devices.size() == 1);
  CHECK(narrowed.run.devices[0].uuid == "GPU-1");
  REQUIRE(narrowed.plan_options.seed.has_value());
  CHECK(narrowed.plan_options.seed->value == 16);
}

TEST_CASE("repro request: a case filter, profiles and repeats reach the plan", "[repro_request]") {
  World w;
  suite::Args a;
  a.suite = "health";
  const auto all = suite::resolve_request(a, w.parent());
  a.case_glob = all.suite.cases.front().def.id;
  a.profiles = profiles::parse_profile_list("blocking");
  a.repeat = 1;
  const auto one = suite::resolve_request(a, w.parent());
  REQUIRE(one.suite.cases.size() == 1);
  for (const auto& run : one.plan.runs) CHECK(run.profile.name == "blocking");
  CHECK(one.plan_options.repeat_override == 1);
}

TEST_CASE("repro request: no GPU leaves the devices empty with the reason", "[repro_request]") {
  World w;
  w.gpus = 0;
  suite::Args a;
  a.suite = "health";
  const auto req = suite::resolve_request(a, w.parent());
  CHECK(req.plan_options.devices.empty());
  CHECK_FALSE(req.plan_options.no_gpu_reason.empty());
  CHECK(req.facts.jobs == suite::default_jobs(0, 64));
}

TEST_CASE("repro request: compute-sanitizer is looked for when a planned profile wants it", "[repro_request]") {
  World w;
  suite::Args a;
  a.suite = "health";
  a.profiles = profiles::parse_profile_list("default");
  auto req = suite::resolve_request(a, w.parent());
  CHECK_FALSE(req.facts.wants_sanitizer);
  CHECK(req.facts.sanitizer.reason.empty());  // not looked for

  w.vars["PATH"] = "/nonexistent";
  a.profiles = profiles::parse_profile_list("sanitizer");
  req = suite::resolve_request(a, w.parent());
  CHECK(req.facts.wants_sanitizer);
  CHECK(req.plan_options.sanitizer_available == req.facts.sanitizer.found);
  CHECK(req.run.sanitizer_path == req.facts.sanitizer.path);
  if (!req.facts.sanitizer.found) CHECK(req.plan_options.sanitizer_reason == req.facts.sanitizer.reason);
}

TEST_CASE("repro request: bad input is a usage error naming it, before the host is asked", "[repro_request]") {
  World w;
  suite::Args a;
  a.suite = "nosuchsuite";
  CHECK_THAT(usage_error_of(a, w.parent()), Catch::Contains("'nosuchsuite' is neither a built-in suite"));
  a.suite = "health";
  a.seed = "-3";
  CHECK(usage_error_of(a, w.parent()) == "--seed: '-3' is not a seed (decimal or 0x-prefixed hex)");
  CHECK(w.host_facts_gathered == 0);
  a.seed.clear();
  a.devices = "5";
  CHECK_THAT(usage_error_of(a, w.parent()), Catch::Contains("no device 5"));
}

TEST_CASE("repro request: the report takes the request and the outcome", "[repro_request]") {
  World w;
  w.gpus = 0;  // host cases only: nothing starts
  suite::Args a;
  a.suite = "flashinfer-tma-seqlen1";
  a.case_glob = "tma.*.host";
  const auto req = suite::resolve_request(a, w.parent());
  auto outcome = suite::run_plan(req.suite, req.plan, req.run);
  const auto r = suite::repro_report(report::new_report({"cudadiag", "repro"}, "repro"), req, outcome);
  const auto parts = suite::repro_report(report::new_report({"cudadiag", "repro"}, "repro"), req.suite,
                                         req.plan_options, req.plan, std::move(outcome), req.facts);
  CHECK(r.results.size() == req.plan.total_runs());
  CHECK(r.verdict.status == parts.verdict.status);
  CHECK(r.gpu.reason == parts.gpu.reason);
  CHECK(report::to_json(r).at("suite") == report::to_json(parts).at("suite"));
}

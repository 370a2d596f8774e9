// The GPU that stands out: synthetic results of several GPUs, one of them failing.
#include <catch2/catch.hpp>

#include <algorithm>

#include "suite/plan.h"
#include "suite/repro_report.h"
#include "report/standout.h"
#include "suite/verdict.h"

using namespace cudadiag;
using namespace cudadiag::suite;
using cudadiag::report::find_standouts;
using cudadiag::report::standout_line;

namespace {

report::Result judged(const std::string& id, const std::string& profile, int gpu, bool met) {
  report::Result r;
  r.case_id = id;
  r.profile = profile;
  r.device = report::Device::gpu("GPU-" + std::to_string(gpu));
  r.device_index = gpu;
  r.expected = "ok";
  r.outcome = met ? report::Outcome::ok : report::Outcome::cuda_error;
  r.expectation_met = met;
  return r;
}

// Every case under two profiles on `gpus` GPUs; `bad` fails the listed runs.
std::vector<report::Result> fleet(int gpus, int bad_gpu, const std::vector<std::string>& bad_cases) {
  std::vector<report::Result> out;
  for (const char* id : {"fault.ok-control", "fa.seed", "index_select.copy"})
    for (const char* profile : {"default", "fence"})
      for (int g = 0; g < gpus; ++g) {
        const bool fails = g == bad_gpu && std::find(bad_cases.begin(), bad_cases.end(), id) != bad_cases.end() &&
                           std::string(profile) == "default";
        out.push_back(judged(id, profile, g, !fails));
      }
  return out;
}

}  // namespace

TEST_CASE("standout: a case failing only on GPU 3 of 8 names GPU 3, its UUID and bus id", "[standout]") {
  const auto results = fleet(8, 3, {"fa.seed", "index_select.copy"});
  report::DeviceInfo d3;
  d3.index = 3;
  d3.uuid = "GPU-3";
  d3.pci_bus_id = "00000000:41:00.0";
  const auto got = find_standouts(results, {d3});
  REQUIRE(got.size() == 1);
  CHECK(got[0].index == 3);
  CHECK(got[0].uuid == "GPU-3");
  CHECK(got[0].pci_bus_id == "00000000:41:00.0");
  CHECK(got[0].runs == std::vector<std::string>{"fa.seed under default", "index_select.copy under default"});
  CHECK(standout_line(got[0]) ==
        "GPU 3 (GPU-3, bus 00000000:41:00.0) stands out: 2 run(s) failed there and passed on the other GPUs: "
        "fa.seed under default, index_select.copy under default");
}

TEST_CASE("standout: on two GPUs the failing one is named, without a bus id when unknown", "[standout]") {
  const auto got = find_standouts(fleet(2, 1, {"fault.ok-control"}));
  REQUIRE(got.size() == 1);
  CHECK(got[0].index == 1);
  CHECK(got[0].pci_bus_id.empty());
  CHECK_THAT(standout_line(got[0]), Catch::StartsWith("GPU 1 (GPU-1) stands out: 1 run(s)"));
}

TEST_CASE("standout: the same failure everywhere, or one GPU alone, names no GPU", "[standout]") {
  // Every GPU fails the case: the case's or the host's, not one GPU's.
  auto all = fleet(4, -1, {});
  for (auto& r : all)
    if (r.case_id == "fa.seed") r.expectation_met = false;
  CHECK(find_standouts(all).empty());
  // Most GPUs fail it: the ones that pass are not "failing", and the failing are the many.
  auto most = fleet(4, -1, {});
  for (auto& r : most)
    if (r.case_id == "fa.seed" && r.device_index != 0) r.expectation_met = false;
  CHECK(find_standouts(most).empty());
  // One GPU: nothing to stand out from.
  CHECK(find_standouts(fleet(1, 0, {"fa.seed"})).empty());
  // Host-only results never name a GPU.
  auto host = fleet(2, -1, {});
  report::Result h = judged("tma.host", "default", 0, false);
  h.device = report::Device::host_only();
  host.push_back(h);
  CHECK(find_standouts(host).empty());
}

TEST_CASE("standout: repro's verdict and report name the one GPU that failed", "[standout]") {
  const Suite s = parse_suite(R"({"cases": [{"id": "fault.ok-control", "profiles": ["default", "fence"]}]})", "s.json");
  PlanOptions popts;
  popts.devices = {{0, "GPU-0", "H100"}, {1, "GPU-1", "H100"}};
  const Plan plan = make_plan(s, popts);
  SuiteOutcome outcome;
  outcome.results = fleet(2, 1, {"fault.ok-control"});
  auto r = report::new_report({"cudadiag", "repro"}, "repro");
  report::DeviceInfo d1;
  d1.index = 1;
  d1.uuid = "GPU-1";
  d1.pci_bus_id = "00000000:C1:00.0";
  r.devices = {d1};
  const auto rep = repro_report(std::move(r), s, popts, plan, std::move(outcome), ReproFacts{});
  CHECK(rep.verdict.status == report::VerdictStatus::suspect);
  REQUIRE(!rep.verdict.reasons.empty());
  CHECK_THAT(rep.verdict.reasons.front(), Catch::StartsWith("GPU 1 (GPU-1, bus 00000000:C1:00.0) stands out: 1 run(s)"));
  const auto suite_section = report::to_json(rep).at("suite");
  REQUIRE(suite_section.at("standout_gpus").size() == 1);
  CHECK(suite_section.at("standout_gpus")[0].at("index") == 1);
  CHECK(suite_section.at("standout_gpus")[0].at("runs")[0] == "fault.ok-control under default");
}

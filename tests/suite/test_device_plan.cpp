// A plan seen device by device: the children and cases spread evenly, each device its
// share of the jobs, the text `repro --plan` prints; for 8 devices no GPU is needed.
#include <catch2/catch.hpp>

#include "suite/device_plan.h"
#include "suite/plan.h"
#include "suite/suite.h"

using namespace cudadiag;
using namespace cudadiag::suite;

namespace {

Suite three_case_suite() {
  return parse_suite(R"({"cases": [
      {"id": "fault.ok-control", "profiles": ["default", "fence"]},
      {"id": "fault.oob-write", "profiles": ["default", "fence"]},
      {"id": "fault.hang", "profiles": ["default"]}
    ]})",
                     "device_plan.json");
}

}  // namespace

TEST_CASE("device plan: 8 devices each get the same children and cases, and an eighth of the jobs", "[device_plan]") {
  PlanOptions o;
  o.devices = planned_devices(8);
  const Plan p = make_plan(three_case_suite(), o);
  const auto per = plan_by_device(p, 8, 64);
  REQUIRE(per.size() == 8);  // no child without a GPU
  size_t runs = 0;
  for (size_t d = 0; d < 8; ++d) {
    CHECK(per[d].slot == static_cast<int>(d));
    CHECK(per[d].job_slots == 8);
    CHECK(per[d].batches.size() == per[0].batches.size());
    CHECK(per[d].case_runs == 5);
    CHECK(per[d].est_wall_ms == Approx(per[0].est_wall_ms));
    runs += per[d].case_runs;
    // Each device's children in start order are longest first.
    for (size_t k = 1; k < per[d].batches.size(); ++k)
      CHECK(p.batches[per[d].batches[k - 1]].est_cost_ms >= p.batches[per[d].batches[k]].est_cost_ms);
    for (size_t bi : per[d].batches) CHECK(p.batches[bi].device_slot == static_cast<int>(d));
  }
  CHECK(runs == p.child_runs());
  // The hang's deadline is the longest child: no device finishes before it.
  for (const auto& dp : per) CHECK(dp.est_wall_ms >= p.batches.front().est_cost_ms);
}

TEST_CASE("device plan: fewer jobs than devices give one slot each; the text names every device", "[device_plan]") {
  PlanOptions o;
  o.devices = planned_devices(3);
  o.devices[1].uuid = "GPU-bbb";
  o.devices[1].name = "H100";
  const Plan p = make_plan(three_case_suite(), o);
  const auto per = plan_by_device(p, 3, 2);
  for (const auto& dp : per) CHECK(dp.job_slots == 1);
  const std::string text = plan_text(p, o.devices, 2);
  CHECK_THAT(text, Catch::Contains("on 3 device(s)"));
  CHECK_THAT(text, Catch::Contains("-j 2 (1 per device)"));
  CHECK_THAT(text, Catch::Contains("GPU 1 (GPU-bbb, H100): " + std::to_string(per[1].batches.size()) + " children, 5 case runs, 1 at once"));
  CHECK_THAT(text, Catch::Contains("GPU 2 (planned): "));
  CHECK_THAT(text, Catch::Contains("fault.hang"));
}

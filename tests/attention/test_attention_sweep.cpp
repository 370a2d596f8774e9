#include <catch2/catch.hpp>

#include "attention/attention_sweep.h"

using namespace cudadiag::attention;

TEST_CASE("sweep planning", "[attention]") {
  CHECK(plan_sweep("").size() == 5 * 4 * 4);
  const auto some = plan_sweep("block_m=64,80;warps=4");
  REQUIRE(some.size() == 2 * 4);
  CHECK(some.front().block_m == 64);
  CHECK(some.front().block_n == 16);
  CHECK(some.back().block_m == 80);
  CHECK(some.back().block_n == 128);
  for (const auto& t : some) CHECK(t.warps == 4);
  CHECK(plan_sweep(" block_n = 64 ").size() == 5 * 4);
  CHECK_THROWS_WITH(plan_sweep("block_k=64"), Catch::Contains("unknown key 'block_k'"));
  CHECK_THROWS_WITH(plan_sweep("block_m=48"), Catch::Contains("block_m=48 is not compiled"));
  CHECK_THROWS_WITH(plan_sweep("warps=four"), Catch::Contains("'four' is not an integer"));
  CHECK_THROWS_WITH(plan_sweep("warps"), Catch::Contains("is not KEY=V1,V2"));
}

TEST_CASE("sweep rows and table", "[attention]") {
  cudadiag::report::Result ok;
  ok.params = cudadiag::report::Fields{{"block_m", 80}, {"block_n", 64}, {"warps", 4}};
  ok.outcome = cudadiag::report::Outcome::ok;
  ok.repeats = cudadiag::report::RepeatStats{};
  ok.repeats->runs = 10;
  ok.details.set("max_rel_err", 4.5e-4);
  ok.duration_ms = 12.25;
  cudadiag::report::Result bad;
  bad.params = cudadiag::report::Fields{{"block_m", 128}, {"block_n", 128}, {"warps", 1}};
  bad.outcome = cudadiag::report::Outcome::invalid_config;
  bad.reason = "shared memory 174080 bytes exceeds the device's opt-in limit of 166912 bytes";
  const auto rows = sweep_rows({ok, bad});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["block_m"] == 80);
  CHECK(rows[0]["failure_rate"] == 0.0);
  CHECK(rows[1]["failure_rate"].is_null());
  CHECK(rows[1]["max_rel_err"].is_null());
  const auto text = render_sweep_table(rows, false);
  CHECK(text.find("block_m  block_n  warps  outcome") == 0);
  CHECK(text.find("80       64       4      ok              0.000      4.50e-04") != std::string::npos);
  CHECK(text.find("invalid_config") != std::string::npos);
  const auto md = render_sweep_table(rows, true);
  CHECK(md.find("| block_m | block_n |") == 0);
  CHECK(md.find("| 128 | 128 | 1 | invalid_config | - | - | 0.0 | shared memory") != std::string::npos);
}

TEST_CASE("attention verdict: findings, ok, and no_gpu only when a configuration needed the GPU", "[attention]") {
  using cudadiag::report::Outcome;
  using cudadiag::report::VerdictStatus;
  cudadiag::report::Result ok;
  ok.case_id = "a";
  ok.outcome = Outcome::ok;
  ok.expected = "ok";
  ok.expectation_met = true;
  const cudadiag::report::GpuStatus ran{true, std::nullopt};
  const cudadiag::report::GpuStatus not_run{false, "no driver"};
  CHECK(attention_verdict({ok}, ran).status == VerdictStatus::ok);

  auto wrong = ok;
  wrong.outcome = Outcome::mismatch;
  wrong.expectation_met = false;
  const auto v = attention_verdict({ok, wrong}, ran);
  CHECK(v.status == VerdictStatus::findings);
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0] == "a: mismatch, expected ok");

  auto skipped = ok;
  skipped.outcome = Outcome::skipped;
  skipped.expectation_met.reset();
  const auto no_gpu = attention_verdict({skipped}, not_run);
  CHECK(no_gpu.status == VerdictStatus::no_gpu);
  CHECK(no_gpu.reasons.back() == "the GPU part could not run: no driver");

  // Rejected on the host and expected to be: nothing needed the GPU.
  cudadiag::report::Result rejected;
  rejected.case_id = "b";
  rejected.device = cudadiag::report::Device::host_only();
  rejected.outcome = Outcome::invalid_config;
  rejected.expected = "invalid_config";
  rejected.expectation_met = true;
  const auto host_only = attention_verdict({rejected}, not_run);
  CHECK(host_only.status == VerdictStatus::ok);
  CHECK(host_only.reasons.empty());
}

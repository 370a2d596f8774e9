// `compare` on the reports of `cudadiag run`: two hosts ran the same command; their
// results pair rung by rung as repro results pair case by case.
#include <catch2/catch.hpp>

#include <set>

#include "compare/compare.h"
#include "evidence/session_report.h"
#include "host/host_facts.h"
#include "run/run_report.h"
#include "run_fixtures.h"

using namespace cudadiag;
using namespace cudadiag::run;
using namespace cudadiag::run::testing;

namespace {

SessionOutcome outcome_of(const std::vector<RunObservation>& observations) {
  SessionOutcome out;
  std::vector<RunJudgement> judgements;
  for (const auto& o : observations) {
    PlannedRun p;
    p.rung = o.rung;
    p.repeat_index = o.repeat_index;
    p.argv = o.argv;
    if (out.plan.empty() || out.plan.back().rung != o.rung) out.plan.push_back(RungPlan{o.rung, "", false, {}});
    out.plan.back().runs.push_back(p);
    out.runs.push_back(SessionRun{p, o, judge_run(o)});
    judgements.push_back(out.runs.back().judgement);
  }
  out.verdict = decide_run_verdict(judgements, {});
  return out;
}

compare::LoadedReport run_report_of(const std::string& host, const std::string& driver,
                                    const std::vector<RunObservation>& observations) {
  SessionOptions opts;
  opts.run.command = {"/usr/bin/python3", "train.py"};
  opts.command_as_given = {"python3", "train.py"};
  opts.run.interposer_path = "/opt/cudadiag/bin/libcudadiag_fence.so";
  const auto host_facts = host::host_facts_from(
      report::json{{"hostname", host}, {"kernel", "6.8.0"}},
      report::json{{"nvml", {{"available", true}}},
                   {"driver", {{"version", driver}}},
                   {"devices", report::json::array({report::json{
                                   {"index", 0}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-" + host}}})}},
      report::json{{"available", true},
                   {"status", "ok"},
                   {"devices", report::json::array({report::json{{"index", 0}, {"uuid", "GPU-" + host}}})}},
      host::DeviceBinding{});
  RunFacts facts;
  facts.no_gpu_reason = host_facts.no_gpu_reason;
  const auto r = run_report(
      evidence::start_session_report({{"cudadiag", "run", "--repeat", "1", "--", "python3", "train.py"}, "run", nullptr,
                                      &host_facts}),
      opts, outcome_of(observations), facts);
  return compare::load_report_text(report::to_json(r).dump(), host + ".json");
}

RunObservation fenced(int exit_code, bool fault, int repeat = 0) {
  auto o = exited(Rung::fence, exit_code, fault ? kIllegalAddress : "");
  o.interposer = fenced_log();
  if (fault) o.xid.push_back(xid31(0x7f0000201000));
  o.repeat_index = repeat;
  return o;
}

RunObservation rung_run(Rung r, int repeat, bool fault) {
  if (r == Rung::fence) return fenced(fault ? 1 : 0, fault, repeat);
  auto o = exited(r, fault ? 1 : 0, fault ? kIllegalAddress : "");
  o.repeat_index = repeat;
  return o;
}

}  // namespace

TEST_CASE("compare pairs run reports rung by rung", "[run_compare]") {
  std::vector<compare::LoadedReport> reports;
  // Host a: the fence exposes the overrun. Host b (another driver): clean everywhere.
  reports.push_back(run_report_of("host-a", "580.159.04",
                                  {exited(Rung::native, 0), exited(Rung::blocking, 0), fenced(1, true)}));
  reports.push_back(run_report_of("host-b", "575.51.03",
                                  {exited(Rung::native, 0), exited(Rung::blocking, 0), fenced(0, false)}));
  CHECK(reports[0].report.verdict.status == report::VerdictStatus::exposed);
  CHECK(reports[1].report.verdict.status == report::VerdictStatus::clean);

  const auto c = compare::compare_reports(reports, {});
  CHECK(c.pairing.unpaired.empty());
  REQUIRE(c.pairing.cases.size() == 3);
  std::set<std::string> ids;
  for (const auto& pc : c.pairing.cases) {
    CHECK(pc.present() == 2);
    ids.insert(pc.key.case_id);
  }
  CHECK(ids == std::set<std::string>{"program.native", "program.blocking", "program.fence"});

  // The rung that differs is named; the others agree.
  REQUIRE(c.outcomes.cases.size() == 3);
  for (const auto& a : c.outcomes.cases) {
    INFO(a.key.case_id);
    if (a.key.case_id == "program.fence") {
      CHECK(a.kind == compare::CaseKind::host_specific);
      CHECK(a.failing == std::vector<std::size_t>{0});
      REQUIRE(a.hosts[0].present());
      CHECK(a.hosts[0].result->error_code == 700);
    } else {
      CHECK(a.kind == compare::CaseKind::agree);
    }
  }
  CHECK(c.verdict.status == report::VerdictStatus::host_specific);
  bool driver_named = false;
  for (const auto& s : c.suspects) driver_named = driver_named || s.field.find("driver") != std::string::npos;
  CHECK(driver_named);
}

TEST_CASE("compare: a run report and another command's do not pair silently", "[run_compare]") {
  std::vector<compare::LoadedReport> reports;
  reports.push_back(run_report_of("host-a", "580.159.04", {exited(Rung::native, 0)}));
  auto other = exited(Rung::native, 0);
  other.command = {"python3", "eval.py"};
  reports.push_back(run_report_of("host-b", "580.159.04", {other}));
  const auto c = compare::compare_reports(reports, {});
  CHECK(c.pairing.unpaired.size() == 2);
  CHECK(c.verdict.status == report::VerdictStatus::config_mismatch);
}

// Repeated runs: a rung is one result with its repeat statistics (Result.repeats), so
// compare tests its failure rate over all its repeats, as it does a repro case's:
// 10/10 against 0/10 is significant.
TEST_CASE("compare tests a rung's failure rate over its repeats", "[run_compare]") {
  std::vector<RunObservation> a, b;
  for (int i = 0; i < 10; ++i) {
    a.push_back(rung_run(Rung::native, i, true));
    b.push_back(rung_run(Rung::native, i, false));
  }
  std::vector<compare::LoadedReport> reports;
  reports.push_back(run_report_of("host-a", "580.159.04", a));
  reports.push_back(run_report_of("host-b", "580.159.04", b));
  const auto c = compare::compare_reports(reports, {});
  REQUIRE(c.outcomes.cases.size() == 1);
  const auto& native = c.outcomes.cases[0];
  CHECK(native.hosts[0].runs == 10);
  CHECK(native.hosts[0].failures == 10);
  CHECK(native.hosts[1].failures == 0);
  REQUIRE(native.rate_tests.size() == 1);
  CHECK(native.rate_tests[0].significant);
}

TEST_CASE("run says why the GPU part could not run in repro's words, from the same host facts", "[run_report]") {
  const auto host_facts = host::host_facts_from(
      report::json::object(), report::json{{"nvml", {{"available", false}, {"reason", "no libnvidia-ml"}}}},
      report::json{{"available", false}, {"status", "no_driver"}, {"reason", "libcuda.so.1 not found: no NVIDIA driver"},
                   {"devices", report::json::array()}},
      host::DeviceBinding{});
  RunFacts facts;
  facts.no_gpu_reason = host_facts.no_gpu_reason;
  SessionOptions opts;
  opts.run.command = {"/usr/bin/python3", "train.py"};
  const auto r = run_report(evidence::start_session_report({{"cudadiag", "run"}, "run", nullptr, &host_facts}), opts,
                            outcome_of({exited(Rung::native, 0, "")}), facts);
  CHECK_FALSE(r.gpu.ran);
  CHECK(r.gpu.reason == "libcuda.so.1 not found: no NVIDIA driver");  // repro's select_devices says the same
}

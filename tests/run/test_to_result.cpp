#include <catch2/catch.hpp>

#include <string>

#include "run/to_result.h"
#include "report/schema.h"
#include "taxonomy/taxonomy.h"
#include "run_fixtures.h"

using namespace cudadiag;
using namespace cudadiag::run;
using namespace cudadiag::run::testing;
using cudadiag::report::json;

namespace {

// The report around one result, validated against the schema the binary embeds.
std::vector<std::string> schema_errors(const cudadiag::report::Result& r) {
  auto rep = cudadiag::report::new_report({"cudadiag", "run", "--", "python3", "train.py"}, "run");
  rep.results.push_back(r);
  rep.verdict.status = cudadiag::report::VerdictStatus::exposed;
  cudadiag::report::finish_report(rep);
  return cudadiag::report::validate_report(cudadiag::report::to_json(rep));
}

}  // namespace

TEST_CASE("a fence fault as a report result") {
  auto o = exited(Rung::fence, 1, kIllegalAddress);
  o.repeat_index = 2;
  o.interposer = fenced_log();
  o.xid.push_back(xid31(0x7f0000200000));
  const auto j = judge_run(o);
  const auto r = to_result(o, j);
  CHECK(r.case_id == "program.fence");
  CHECK(r.kernel == cudadiag::cases::Family::program);
  CHECK(r.profile == "fence");
  CHECK(cudadiag::report::to_json(r.params) == json{{"command", {"python3", "train.py"}}, {"rung", "fence"}, {"repeat", 2}});
  CHECK(r.allocator == profiles::Allocator::fence_back);
  CHECK(r.outcome == report::Outcome::cuda_error);
  REQUIRE(r.error);
  CHECK(r.error->code == 700);
  CHECK(r.error->name == "cudaErrorIllegalAddress");
  CHECK(r.error->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  CHECK(r.error->sticky);
  CHECK(r.error->surfaced_at == "program");
  CHECK(r.error->last_kernel == "index_select_kernel");
  CHECK_FALSE(r.error->next_step.empty());
  REQUIRE(r.child);
  CHECK(r.child->pid == 4242);
  CHECK(r.child->exit_code == 1);
  CHECK(r.xid.size() == 1);
  REQUIRE(r.faulting_buffer);
  CHECK(r.faulting_buffer->name == "allocation #7");
  CHECK(r.faulting_buffer->direction == report::BufferDirection::end_overrun);
  CHECK(r.launch_log.size() == 2);
  const auto d = cudadiag::report::to_json(r.details);
  CHECK(d["run_outcome"] == "cuda_error");
  CHECK(d["fence"]["effective"] == true);
  CHECK(d["fence"]["summary"]["fenced"] == 2);
  CHECK(d["attribution"]["relation"] == "past_end");
  CHECK(d["attribution"]["fault_address"] == "0x7f0000200000");
  CHECK(d["attribution"]["distance_max"] == 4095);
  CHECK(d["mmu_fault"]["access"] == "write");
  CHECK(d["error_lines"][0]["framework"] == "pytorch");
  CHECK(d["error_lines"][0]["line_number"] == 1);
  CHECK(schema_errors(r) == std::vector<std::string>{});
}

TEST_CASE("every outcome maps onto the report vocabulary and validates") {
  std::vector<RunObservation> obs{exited(Rung::native, 0), exited(Rung::native, 3), killed(Rung::native, 11, "SIGSEGV"),
                                  exited(Rung::native, 127, "sh: 1: x: not found\n")};
  auto fence = exited(Rung::fence, 0);
  fence.interposer_error = "no ring";
  obs.push_back(fence);
  auto timeout = exited(Rung::blocking, 0);
  timeout.child.ending = cudadiag::runner::Ending::timeout;
  timeout.child.exit_code.reset();
  obs.push_back(timeout);
  auto xid_only = exited(Rung::native, 1);
  xid_only.xid.push_back(xid31(0x7f0000200000));
  obs.push_back(xid_only);
  const std::vector<std::string> expected{"ok", "crashed", "crashed", "skipped", "ok", "timeout", "cuda_error"};
  const std::vector<std::string> run_outcomes{"clean",          "exit_code",           "crashed",   "does_not_start",
                                              "fence_not_effective", "timeout", "cuda_error"};
  for (std::size_t i = 0; i < obs.size(); ++i) {
    INFO(i);
    const auto r = to_result(obs[i], judge_run(obs[i]));
    CHECK(cudadiag::report::to_string(r.outcome) == expected[i]);
    CHECK(r.details.string_or("run_outcome", "") == run_outcomes[i]);
    CHECK_FALSE(r.reason.empty());
    CHECK(schema_errors(r) == std::vector<std::string>{});
  }
  // Xid-only evidence has no CUDA code: -1, and the Xid as the name.
  const auto r = to_result(xid_only, judge_run(xid_only));
  CHECK(r.error->code == -1);
  CHECK(r.error->name == "Xid 31");
}

TEST_CASE("hostile output still makes a report that serialises") {
  std::string junk = "CUDA error: an illegal memory access was encountered \xC0\xFF\n";
  for (int i = 0; i < 3000; ++i) junk += static_cast<char>((i * 131) & 0xFF);
  auto o = exited(Rung::native, 1, junk, junk);
  o.command = {"python3", "tr\xFF" "ain.py"};
  o.xid.push_back(*cudadiag::host::parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, bad \xFE\xFF text"));
  const auto r = to_result(o, judge_run(o));
  CHECK_NOTHROW(cudadiag::report::to_json(r).dump());
  CHECK(schema_errors(r) == std::vector<std::string>{});
}

TEST_CASE("the verdict as the report's verdict") {
  RunVerdict v;
  v.kind = VerdictKind::exposed;
  v.reason = "exposed by the fence rung (1/1 runs): fence: X";
  v.evidence = "fence: X";
  v.notes = {"fence failed 1/1 runs (95% CI 21%-100%)"};
  auto rv = to_report_verdict(v);
  CHECK(rv.status == report::VerdictStatus::exposed);
  CHECK(rv.reasons == std::vector<std::string>{v.reason, v.notes[0]});  // evidence already in the reason
  v.reason = "flaky";
  rv = to_report_verdict(v);
  CHECK(rv.reasons == std::vector<std::string>{"flaky", "fence: X", v.notes[0]});
}

TEST_CASE("every next step fits the rung it is printed for") {
  // The fence rung's own result never advises re-running with the fence.
  auto o = exited(Rung::fence, 1, kIllegalAddress);
  o.interposer = fenced_log();
  o.xid.push_back(xid31(0x7f0000200000));
  const auto fence = to_result(o, judge_run(o));
  REQUIRE(fence.error);
  INFO(fence.error->next_step);
  CHECK(fence.error->next_step.find("profile") == std::string::npos);
  CHECK(fence.error->next_step.find("re-run with the `fence`") == std::string::npos);
  CHECK(fence.error->next_step.find("the sanitizer rung names the exact kernel, thread and PC") != std::string::npos);

  const auto native = to_result(exited(Rung::native, 1, kIllegalAddress), judge_run(exited(Rung::native, 1, kIllegalAddress)));
  REQUIRE(native.error);
  CHECK(native.error->next_step.find("this run's fence rung faults at the first out-of-bounds byte") == 0);

  auto s = exited(Rung::sanitizer, 1, kIllegalAddress);
  s.sanitizer = cudadiag::sanitizer::MemcheckReport{};
  const auto sanitizer = to_result(s, judge_run(s));
  REQUIRE(sanitizer.error);
  CHECK(sanitizer.error->next_step.find("memcheck's records of this rung") == 0);
  CHECK(sanitizer.error->next_step.find("sanitizer` profile") == std::string::npos);

  // The rest of the taxonomy's advice stays: misaligned keeps its first clause.
  const auto* misaligned = cudadiag::taxonomy::find_runtime(716);
  REQUIRE(misaligned);
  const auto step = run_next_step(Rung::fence, misaligned->next_step);
  CHECK(step.rfind("check base pointers and strides against the vector width", 0) == 0);
  CHECK(step.find("profile") == std::string::npos);
  // A launch failure keeps what follows the profile clause.
  const auto* launch = cudadiag::taxonomy::find_runtime(719);
  REQUIRE(launch);
  CHECK(run_next_step(Rung::native, launch->next_step).find("; check the kernel log (Xid 13/31)") != std::string::npos);

  // No taxonomy entry's advice names a repro profile in any rung's result.
  for (const auto& entry : cudadiag::taxonomy::all())
    for (const Rung rung : all_rungs()) {
      const auto text = run_next_step(rung, entry.next_step);
      INFO(entry.name << " on " << to_string(rung) << ": " << text);
      CHECK(text.find("profile") == std::string::npos);
      CHECK_FALSE(text.empty());
    }
}

// The settings a rung adds to the rung below, the bisection's runs, and the rungs above
// that run without a setting that broke the program (breaking_setting.h).
#include <catch2/catch.hpp>

#include <algorithm>

#include "run/breaking_setting.h"

using namespace cudadiag::run;
using namespace std::chrono_literals;

namespace {

const PlannedRun& run_of(const std::vector<RungPlan>& plans, Rung r) {
  const auto it = std::find_if(plans.begin(), plans.end(), [&](const RungPlan& p) { return p.rung == r; });
  REQUIRE(it != plans.end());
  return it->runs.at(0);
}

RunOptions options() {
  RunOptions o;
  o.command = {"python3", "ipc.py"};
  o.interposer_path = "/opt/cudadiag/libcudadiag_fence.so";
  o.work_dir = "/tmp/w";
  return o;
}

}  // namespace

TEST_CASE("breaking setting: one setting at a time, the interposer as one", "[breaking_setting]") {
  const auto plans = plan_rungs(options());
  const PlannedRun& native = run_of(plans, Rung::native);
  const PlannedRun& blocking = run_of(plans, Rung::blocking);
  const PlannedRun& fence = run_of(plans, Rung::fence);

  const auto between = settings_between(native, blocking);
  std::vector<std::string> texts;
  for (const auto& s : between) texts.push_back(s.text);
  CHECK(std::find(texts.begin(), texts.end(), "PYTORCH_NO_CUDA_MEMORY_CACHING=1") != texts.end());
  CHECK(std::find(texts.begin(), texts.end(), "PYTORCH_CUDA_ALLOC_CONF unset") != texts.end());
  CHECK(std::find(texts.begin(), texts.end(), "the fence interposer") == texts.end());

  const auto it = std::find_if(between.begin(), between.end(),
                               [](const RungSetting& s) { return s.text == "PYTORCH_NO_CUDA_MEMORY_CACHING=1"; });
  const PlannedRun trial = with_setting(native, blocking, *it);
  CHECK(trial.env_set.at("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1");
  CHECK(trial.env_set.count("CUDA_LAUNCH_BLOCKING") == 0);  // only the one setting
  CHECK(trial.argv == native.argv);

  // The fence adds only the interposer to the blocking rung: one setting.
  const auto fence_only = settings_between(blocking, fence);
  REQUIRE(fence_only.size() == 1);
  CHECK(fence_only[0].text == "the fence interposer");
  CHECK(fence_only[0].interposer);
  CHECK(std::none_of(between.begin(), between.end(), [](const RungSetting& s) { return s.interposer; }));

  // The rung above runs without the breaking setting.
  PlannedRun above = fence;
  CHECK(drop_setting(above, native, *it));
  CHECK(above.env_set.count("PYTORCH_NO_CUDA_MEMORY_CACHING") == 0);
  CHECK(above.env_set.at("LD_PRELOAD") == fence.env_set.at("LD_PRELOAD"));
  CHECK_FALSE(drop_setting(above, native, *it));  // nothing left to drop
}

TEST_CASE("breaking setting: what counts, how long a trial may run, the program's last words", "[breaking_setting]") {
  RunJudgement j;
  j.outcome = RunOutcome::exit_code;
  CHECK(fails_without_cuda_error(j));
  j.outcome = RunOutcome::timeout;
  CHECK(fails_without_cuda_error(j));
  j.hang = HangFinding{};
  CHECK_FALSE(fails_without_cuda_error(j));  // a GPU hang is the program's
  j.hang.reset();
  j.outcome = RunOutcome::crashed;
  CHECK_FALSE(fails_without_cuda_error(j));
  j.outcome = RunOutcome::cuda_error;
  CHECK_FALSE(fails_without_cuda_error(j));

  CHECK(bisect_deadline(2000.0, 120s) == 16000ms);
  CHECK(bisect_deadline(200000.0, 120s) == 120s);

  RunObservation obs;
  obs.child.err.head = "Traceback (most recent call last):\n  ...\nRuntimeError: invalid device pointer\n\n";
  CHECK(last_output_line(obs) == "RuntimeError: invalid device pointer");
  // What the parent printed after its child's traceback does not hide the error.
  obs.child.err.head += "the child never finished\n";
  CHECK(last_output_line(obs) == "RuntimeError: invalid device pointer");
  obs.child.err.head = "plain words\n";
  CHECK(last_output_line(obs) == "plain words");
  CHECK(breaking_text(RungSetting{{"X"}, {}, "X=1"}, "boom") == "X=1 breaks this program: `boom`");
}

TEST_CASE("breaking setting: a deadline learned from the native run; --timeout still caps", "[breaking_setting]") {
  // 10 x the native run, at least 60 s.
  auto d = rung_deadline(Rung::fence, 7200.0, 3600s, 10);
  CHECK(d.learned);
  CHECK(d.deadline == 72s);
  CHECK(d.text == "10 x the native run's 7.2 s, at least 60 s");
  d = rung_deadline(Rung::blocking, 800.0, 3600s, 10);
  CHECK(d.learned);
  CHECK(d.deadline == 60s);  // a quick program still gets a minute
  // memcheck slows a program by an order of magnitude: 10 times that again.
  d = rung_deadline(Rung::sanitizer, 7200.0, 36000s, 10);
  CHECK(d.learned);
  CHECK(d.deadline == 720s);
  CHECK(d.text == "100 x the native run's 7.2 s, at least 600 s");
  // --timeout caps: a learned deadline past it is no deadline of its own.
  d = rung_deadline(Rung::fence, 7200.0, 50s, 10);
  CHECK_FALSE(d.learned);
  CHECK(d.deadline == 50s);
  CHECK(d.text.empty());
  d = rung_deadline(Rung::fence, 30000.0, 120s, 10);
  CHECK_FALSE(d.learned);
  CHECK(d.deadline == 120s);
  // Nothing learned: the native rung itself, or no native run that passed.
  CHECK_FALSE(rung_deadline(Rung::native, 7200.0, 3600s, 10).learned);
  CHECK(rung_deadline(Rung::fence, std::nullopt, 3600s, 10).deadline == 3600s);
  // A floor of the caller's.
  CHECK(rung_deadline(Rung::fence, 10.0, 20s, 10, 500ms).deadline == 500ms);

  // The native run it learns from: the longest of the native rung's runs, all passing.
  const auto run = [](Rung r, RunOutcome o) {
    RunJudgement j;
    j.rung = r;
    j.outcome = o;
    return j;
  };
  CHECK(native_wall_ms({run(Rung::native, RunOutcome::clean), run(Rung::native, RunOutcome::clean),
                        run(Rung::blocking, RunOutcome::clean)},
                       {1000.0, 4000.0, 90000.0}) == 4000.0);
  CHECK_FALSE(native_wall_ms({run(Rung::native, RunOutcome::clean), run(Rung::native, RunOutcome::timeout)},
                             {1000.0, 3600000.0}));
  CHECK_FALSE(native_wall_ms({run(Rung::native, RunOutcome::exit_code)}, {5.0}));
  CHECK_FALSE(native_wall_ms({run(Rung::fence, RunOutcome::clean)}, {5.0}));
}

TEST_CASE("breaking setting: the broken rung runs once more without it, into files of its own", "[breaking_setting]") {
  const auto plans = plan_rungs(options());
  const PlannedRun& native = run_of(plans, Rung::native);
  const PlannedRun& blocking = run_of(plans, Rung::blocking);
  const PlannedRun& fence = run_of(plans, Rung::fence);
  const auto between = settings_between(native, fence);
  const auto caching = std::find_if(between.begin(), between.end(),
                                    [](const RungSetting& s) { return s.text == "PYTORCH_NO_CUDA_MEMORY_CACHING=1"; });
  REQUIRE(caching != between.end());

  // The blocking rung: its other settings kept, the caching allocator left on.
  const auto again = rerun_without(blocking, native, *caching);
  REQUIRE(again);
  CHECK(again->rung == Rung::blocking);
  CHECK(again->env_set.count("PYTORCH_NO_CUDA_MEMORY_CACHING") == 0);
  CHECK(again->env_set.at("CUDA_LAUNCH_BLOCKING") == "1");
  CHECK(again->argv == blocking.argv);

  // A fence rung gets a ring of its own (the broken run's file stays as it was read).
  const auto fence_again = rerun_without(fence, native, *caching);
  REQUIRE(fence_again);
  CHECK(fence_again->ring_path == "/tmp/w/fence-0-again.ring");
  CHECK(fence_again->env_set.at("CUDADIAG_RING") == "/tmp/w/fence-0-again.ring");
  CHECK(fence_again->env_set.count("LD_PRELOAD") == 1);  // still the fence
  CHECK(fence_again->env_set.count("PYTORCH_NO_CUDA_MEMORY_CACHING") == 0);

  // The interposer itself: the rung without it is the rung below, nothing to run again;
  // nor when the setting is not the rung's.
  const auto interposer = std::find_if(between.begin(), between.end(), [](const RungSetting& s) { return s.interposer; });
  REQUIRE(interposer != between.end());
  CHECK_FALSE(rerun_without(fence, native, *interposer));
  CHECK_FALSE(rerun_without(native, native, *caching));
}

TEST_CASE("breaking setting: what running without it costs the ladder", "[breaking_setting]") {
  CHECK(kept_on_text(RungSetting{{"PYTORCH_NO_CUDA_MEMORY_CACHING"}, {}, "PYTORCH_NO_CUDA_MEMORY_CACHING=1"}) ==
        "PyTorch's caching allocator stayed on for this program: the fence guards the allocator's segments, not each "
        "tensor (an overrun that stays inside a segment goes unseen), and memcheck sees the segments too");
  CHECK_THAT(kept_on_text(RungSetting{{"XLA_PYTHON_CLIENT_ALLOCATOR"}, {}, "XLA_PYTHON_CLIENT_ALLOCATOR=platform"}),
             Catch::StartsWith("JAX/XLA's caching allocator stayed on"));
  CHECK_THAT(kept_on_text(RungSetting{{"CUDA_LAUNCH_BLOCKING"}, {}, "CUDA_LAUNCH_BLOCKING=1"}),
             Catch::StartsWith("launches stayed asynchronous"));
  CHECK_THAT(kept_on_text(RungSetting{{}, {"PYTORCH_CUDA_ALLOC_CONF"}, "PYTORCH_CUDA_ALLOC_CONF unset"}),
             Catch::StartsWith("the program's PYTORCH_CUDA_ALLOC_CONF stayed as it was"));
  RungSetting interposer;
  interposer.interposer = true;
  CHECK(kept_on_text(interposer).empty());
  CHECK(kept_on_text(RungSetting{{"SOME_OTHER"}, {}, "SOME_OTHER=1"}).empty());
}

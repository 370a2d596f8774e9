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
  CHECK(above.env_set.at("CUDA_LAUNCH_BLOCKING") == "1");
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

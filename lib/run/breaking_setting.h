#pragma once
// A rung that breaks the program: when a rung fails without a CUDA error (a non-zero exit
// or its deadline, no GPU hang) while the rung below it passed or failed on a CUDA error
// of the program's own (a fault the native rung shows, which the rung never reached), one
// of the rung's own settings is the likely cause (PyTorch's CUDA IPC needs the caching allocator that the
// blocking rung turns off). The session re-runs the rung below's environment plus one of
// the rung's settings at a time, with a bounded deadline, until one fails the same way;
// that setting is named ("PYTORCH_NO_CUDA_MEMORY_CACHING=1 breaks this program: ..."),
// the rung's failure is the tool's, not the program's, the rung runs once more without
// it, and the rungs above run without it instead of failing on it again: a setting known
// to break the program is never run (nor waited on) again. Planning only: nothing here
// runs anything.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "run/judge.h"
#include "run/rungs.h"

namespace cudadiag::run {

// One setting of a rung that the rung below does not have: a variable set (or removed),
// or the fence interposer as a whole (LD_PRELOAD with its CUDADIAG_* variables).
struct RungSetting {
  std::vector<std::string> set_names;   // set to the rung's values
  std::vector<std::string> unset_names; // removed
  std::string text;                     // "PYTORCH_NO_CUDA_MEMORY_CACHING=1", "PYTORCH_CUDA_ALLOC_CONF unset", "the fence interposer"
  bool interposer = false;              // the fence interposer itself (LD_PRELOAD, CUDADIAG_*)
};
std::vector<RungSetting> settings_between(const PlannedRun& below, const PlannedRun& rung);

// The rung below's run with one of the rung's settings added: what the bisection runs.
PlannedRun with_setting(const PlannedRun& below, const PlannedRun& rung, const RungSetting& s);

// A rung above runs without the breaking setting: the rung below's values (or the
// inherited environment) in its place. Returns whether anything changed.
bool drop_setting(PlannedRun& run, const PlannedRun& below, const RungSetting& s);

// The broken rung's run once more without the breaking setting (the rung below's value in
// its place), into files of its own: the session runs it once, so that the rung still
// checks the program (a correct torch.multiprocessing program is clean on every rung, its
// caching allocator on). None when the setting is the interposer itself (the rung
// without it is the rung below) or nothing would change.
std::optional<PlannedRun> rerun_without(const PlannedRun& broken, const PlannedRun& below, const RungSetting& s);

// What running without the setting costs the ladder, for the report: "PyTorch's caching
// allocator stayed on for this program: the fence guards the allocator's segments, not
// each tensor ..."; "" when the setting changes nothing any rung could see.
std::string kept_on_text(const RungSetting& s);

// A failure the tool may have caused: exit non-zero or deadline, no CUDA error, no signal,
// no GPU hang, no slack write.
bool fails_without_cuda_error(const RunJudgement& j);

// The deadline of one bisection run: three times the passing run's duration and 10 s
// more, never longer than the session's own (nor than the rung's learned deadline: the
// caller passes the shorter).
std::chrono::milliseconds bisect_deadline(double passing_wall_ms, std::chrono::milliseconds session_timeout);

// A deadline that learns: a rung's run that takes far longer than the native run (kHungFactor
// times its duration, and at least kHungFloor) is ended as hung, so that a setting that
// makes the program wait forever (a CUDA IPC hand-over the fence refused) costs minutes,
// not the session's whole --timeout, and goes through the search for the breaking
// setting. Memcheck's rung gets `sanitizer_factor` times that (it slows a program by an
// order of magnitude). The session's own deadline for the rung (`rung_timeout`: --timeout,
// times the sanitizer factor on that rung) always caps it. No native run that passed (or
// the native rung itself): the session's deadline, unlearned.
inline constexpr double kHungFactor = 10.0;
inline constexpr std::chrono::milliseconds kHungFloor{60 * 1000};
struct RungDeadline {
  std::chrono::milliseconds deadline{0};
  bool learned = false;  // shorter than the session's, from the native run
  std::string text;      // learned: "10 x the native run's 7.2 s, at least 60 s"
};
RungDeadline rung_deadline(Rung rung, std::optional<double> native_wall_ms, std::chrono::milliseconds rung_timeout,
                           int sanitizer_factor, std::chrono::milliseconds floor = kHungFloor);

// The native run the deadlines learn from: the longest of the native rung's runs, when
// every one of them passed (a failing or timed-out native run teaches nothing).
std::optional<double> native_wall_ms(const std::vector<RunJudgement>& runs, const std::vector<double>& wall_ms);

// The program's last words: the last line of stderr naming an error or exception
// ("RuntimeError: invalid device pointer"), else its last non-empty line (else stdout's),
// at most 200 characters.
std::string last_output_line(const RunObservation& obs);

struct BreakingSetting {
  Rung rung = Rung::native;
  RungSetting setting;
  std::string error_line;  // what the program said when it broke
  int bisect_runs = 0;
  std::string text;        // "PYTORCH_NO_CUDA_MEMORY_CACHING=1 breaks this program: `RuntimeError: ...`"
  std::optional<PlannedRun> rerun;  // the rung once more without it (rerun_without), until it ran
};
std::string breaking_text(const RungSetting& s, const std::string& error_line);

}  // namespace cudadiag::run

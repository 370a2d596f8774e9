#pragma once
// The words a report is made of, as types. Strings exist only at the JSON edge:
// to_string() when writing, parse_*() when reading; everything in between compares
// enumerators.
//
// Outcomes (result.outcome):
//   ok                ran; no CUDA error; results verified (or nothing to verify)
//   mismatch          ran; no CUDA error; results differ from the reference
//   cuda_error        a CUDA error surfaced (result.error has code, class, sticky, where)
//   invalid_config    rejected before launch (kernel constraints or device limits)
//   timeout           passed its deadline and was killed
//   crashed           died by a signal, or exited non-zero without a result
//   no_result         exited 0 but sent no result
//   skipped           a precondition is missing (no GPU, no compute-sanitizer); reason given
//   host_valid        a host-only check passed (e.g. the TMA descriptor validator)
//   host_invalid      a host-only check found violations
//   driver_disagrees  the driver's verdict differs from the host validator's
//
// Verdict statuses: one vocabulary per command (statuses_of), the same lists the
// report's JSON Schema names per invocation.command.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "runner/ending.h"

namespace cudadiag::report {

enum class Outcome : std::uint8_t {
  ok,
  mismatch,
  cuda_error,
  invalid_config,
  timeout,
  crashed,
  no_result,
  skipped,
  host_valid,
  host_invalid,
  driver_disagrees,
};

std::string_view to_string(Outcome o);
std::optional<Outcome> parse_outcome(std::string_view text);
const std::vector<Outcome>& all_outcomes();

// The GPU raised an error or the process died: pid-less kernel-log lines may be its.
bool is_error(Outcome o);
// Worth explaining: an error, a wrong result.
bool is_failure(Outcome o);
// Shown in a report's details: anything but a clean pass or a skip.
bool needs_explaining(Outcome o);

// How a child process ended: lib/runner decodes it and names it (runner/ending.h;
// report: child.ending).
using ChildEnding = runner::Ending;

enum class VerdictStatus : std::uint8_t {
  // repro: every expectation met / a known-good case failed or a known-bad one was not
  // caught / the GPU part or a profile could not run, or the run was interrupted
  healthy,
  suspect,
  incomplete,
  // fault, index-select, attention, tma, env: as expected / not / no GPU to run on
  ok,
  findings,
  no_gpu,
  // env: why the GPU part could not run
  no_driver,
  no_device,
  probe_failed,
  cuda_error,
  // compare
  same,
  host_specific,
  flaky,
  config_mismatch,
  // run: a rung exposed a fault / nothing found with an effective fence / the command
  // could not be started / nothing found, but the fence could not see the allocations
  exposed,
  clean,
  does_not_start,
  inconclusive,
};

std::string_view to_string(VerdictStatus s);
std::optional<VerdictStatus> parse_verdict_status(std::string_view text);

// The commands that write a report (invocation.command).
enum class Command : std::uint8_t { repro, fault, index_select, attention, tma, env, compare, run };
std::string_view to_string(Command c);
std::optional<Command> parse_command(std::string_view text);

// The statuses `command` may give.
const std::vector<VerdictStatus>& statuses_of(Command command);

// The exit code of every command for its verdict (README "Exit codes"): 0 healthy, ok,
// same, clean; 1 findings of any kind, or an interrupted run; 2 a command that could not
// be started; 3 the GPU part could not run, or CUDA could not start in the program run
// ran (run's inconclusive verdict when nothing was tested).
int exit_code_for(VerdictStatus s, bool interrupted = false, bool cuda_could_not_start = false);

}  // namespace cudadiag::report

#include "report/vocabulary.h"

#include "util/choices.h"
#include "util/exit_codes.h"

namespace cudadiag::report {
namespace {

constexpr ChoiceTable<Outcome, 11> kOutcomes{{
    {Outcome::ok, "ok"},
    {Outcome::mismatch, "mismatch"},
    {Outcome::cuda_error, "cuda_error"},
    {Outcome::invalid_config, "invalid_config"},
    {Outcome::timeout, "timeout"},
    {Outcome::crashed, "crashed"},
    {Outcome::no_result, "no_result"},
    {Outcome::skipped, "skipped"},
    {Outcome::host_valid, "host_valid"},
    {Outcome::host_invalid, "host_invalid"},
    {Outcome::driver_disagrees, "driver_disagrees"},
}};

constexpr ChoiceTable<VerdictStatus, 18> kStatuses{{
    {VerdictStatus::healthy, "healthy"},
    {VerdictStatus::suspect, "suspect"},
    {VerdictStatus::incomplete, "incomplete"},
    {VerdictStatus::ok, "ok"},
    {VerdictStatus::findings, "findings"},
    {VerdictStatus::no_gpu, "no_gpu"},
    {VerdictStatus::no_driver, "no_driver"},
    {VerdictStatus::no_device, "no_device"},
    {VerdictStatus::probe_failed, "probe_failed"},
    {VerdictStatus::cuda_error, "cuda_error"},
    {VerdictStatus::same, "same"},
    {VerdictStatus::host_specific, "host_specific"},
    {VerdictStatus::flaky, "flaky"},
    {VerdictStatus::config_mismatch, "config_mismatch"},
    {VerdictStatus::exposed, "exposed"},
    {VerdictStatus::clean, "clean"},
    {VerdictStatus::does_not_start, "does_not_start"},
    {VerdictStatus::inconclusive, "inconclusive"},
}};

}  // namespace

std::string_view to_string(Outcome o) { return choice_name(kOutcomes, o); }
std::optional<Outcome> parse_outcome(std::string_view text) { return parse_choice(kOutcomes, text); }

const std::vector<Outcome>& all_outcomes() {
  static const std::vector<Outcome> all = [] {
    std::vector<Outcome> v;
    for (const auto& c : kOutcomes) v.push_back(c.value);
    return v;
  }();
  return all;
}

bool is_error(Outcome o) {
  return o == Outcome::cuda_error || o == Outcome::crashed || o == Outcome::timeout || o == Outcome::no_result;
}

bool is_failure(Outcome o) { return is_error(o) || o == Outcome::mismatch; }

bool needs_explaining(Outcome o) {
  return o != Outcome::ok && o != Outcome::skipped && o != Outcome::host_valid;
}

std::string_view to_string(VerdictStatus s) { return choice_name(kStatuses, s); }
std::optional<VerdictStatus> parse_verdict_status(std::string_view text) { return parse_choice(kStatuses, text); }

namespace {
constexpr ChoiceTable<Command, 8> kCommands{{
    {Command::repro, "repro"},
    {Command::fault, "fault"},
    {Command::index_select, "index-select"},
    {Command::attention, "attention"},
    {Command::tma, "tma"},
    {Command::env, "env"},
    {Command::compare, "compare"},
    {Command::run, "run"},
}};
}  // namespace

std::string_view to_string(Command c) { return choice_name(kCommands, c); }
std::optional<Command> parse_command(std::string_view text) { return parse_choice(kCommands, text); }

const std::vector<VerdictStatus>& statuses_of(Command command) {
  using V = VerdictStatus;
  static const std::vector<V> repro{V::healthy, V::suspect, V::incomplete};
  static const std::vector<V> single{V::ok, V::findings, V::no_gpu};
  static const std::vector<V> env{V::ok, V::findings, V::no_driver, V::no_device, V::probe_failed, V::cuda_error};
  static const std::vector<V> compare{V::same, V::host_specific, V::flaky, V::config_mismatch};
  static const std::vector<V> run{V::exposed, V::clean, V::flaky, V::does_not_start, V::inconclusive};
  switch (command) {
    case Command::repro: return repro;
    case Command::fault:
    case Command::index_select:
    case Command::attention:
    case Command::tma: return single;
    case Command::env: return env;
    case Command::compare: return compare;
    case Command::run: return run;
  }
  return repro;  // unreachable: every command is named above
}

int exit_code_for(VerdictStatus s, bool interrupted, bool cuda_could_not_start) {
  using V = VerdictStatus;
  if (interrupted) return kExitFindings;
  if (cuda_could_not_start) return kExitEnvironment;
  switch (s) {
    case V::healthy:
    case V::ok:
    case V::same:
    case V::clean: return kExitOk;
    case V::suspect:
    case V::findings:
    case V::host_specific:
    case V::flaky:
    case V::config_mismatch:
    case V::exposed:
    case V::inconclusive: return kExitFindings;
    case V::does_not_start: return kExitUsage;
    case V::incomplete:
    case V::no_gpu:
    case V::no_driver:
    case V::no_device:
    case V::probe_failed:
    case V::cuda_error: return kExitEnvironment;
  }
  return kExitInternal;
}

}  // namespace cudadiag::report

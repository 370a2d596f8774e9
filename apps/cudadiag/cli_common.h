#pragma once
// Conventions shared by every subcommand: --format, -o, -q/-v, --redact, --no-color,
// and emitting a report (rendered, written atomically with -o).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <limits>
#include <string>
#include <vector>

#include "evidence/parent.h"
#include "profiles/allocator.h"
#include "report/redact.h"
#include "report/render.h"
#include "report/report.h"

namespace cudadiag::app {

// An integer option the user did not give: the catalog's (or the kernel's) default stays.
inline constexpr long long kNotGiven = std::numeric_limits<long long>::min();

struct CommonOptions {
  std::string format = "text";  // text | json | md
  std::string output;           // -o FILE; empty or "-": stdout
  bool quiet = false;
  int verbose = 0;
  bool redact = false;
  std::string redact_key_file;  // --redact-key FILE (implies --redact)
  bool no_color = false;
  // With --redact: how tokens are made, read before any work (a bad key is exit 2).
  std::shared_ptr<const report::RedactionTokens> redaction;
  // Settled once the options are read: the format as the enum, whether stdout gets
  // colour (use_color), and the -o path as messages show it (printable).
  report::Format report_format = report::Format::text;
  bool color = false;
  std::string output_shown;
};

// Global state set up by main(): argv and the options of the subcommand being run.
struct Invocation {
  std::vector<std::string> argv;
  char** envp = nullptr;
  std::string self_exe;  // absolute path of this executable (/proc/self/exe)
};
const Invocation& invocation();
void set_invocation(Invocation inv);

// This process as a command's request resolution sees it (evidence/parent.h): the
// executable, the environment children inherit, the host facts (gathered when asked),
// the CPU count and the stop flag.
evidence::Parent parent_process();

// --help for people: every line within 80 columns (option descriptions wrapped under
// their column, long option names on a line of their own, the description and footer
// wrapped). Set on the root before the subcommands are added: they inherit it.
void use_help_formatter(CLI::App& root);

// The end of a subcommand's --help: `notes` (terms, exit codes), then "Example:" and one
// or two command lines a user can copy, each with a short comment after '#'.
void set_help_footer(CLI::App* cmd, const std::string& notes, const std::vector<std::string>& examples);

// Adds --format, -o/--output, -q, -v, --redact, --redact-key, --no-color to a subcommand.
void add_common_options(CLI::App* cmd, CommonOptions& opts);

// --allocator NAME (pool, direct, fence-back, fence-front; "fence" means fence-back),
// parsed once into the enum.
CLI::Option* add_allocator_option(CLI::App* cmd, profiles::Allocator& target);
// GPU core dumps are armed by default (target true; `armed_where` says where: "a failing
// rung runs once more with GPU core dumps armed"); --no-coredump sets target false.
// --coredump, from when dumps had to be asked for, is accepted and does nothing.
CLI::Option* add_coredump_option(CLI::App* cmd, bool& target, const std::string& armed_where);

// One rule for the options every command that runs work shares, so that a user who
// learnt one command knows them all:
//   --timeout SECONDS      how long one child (or one run of the user's program) may take,
//                          always in seconds (fractions allowed); a second, narrower one
//                          is named for what it limits: env's --probe-timeout SECONDS.
//                          No option counts milliseconds: an old --deadline-ms stays as a
//                          hidden alias that still works and prints one deprecation line.
//   --repeat N             runs of each case, 1..kMaxRepeat everywhere (run keeps only the
//                          first failing and the latest run's output, so memory stays flat).
//   --seed SEED            the base of the repeat series, 64-bit, decimal or 0x hex: every
//                          command that draws random inputs takes it (fault, index-select,
//                          attention, repro); --replay SEED runs once with exactly that seed.
//   family names           written with '-' or '_' alike (index-select = index_select).
// The helpers below add them; a command never spells its own.
inline constexpr long long kMaxRepeat = 1000000;
// --repeat N, 1..kMaxRepeat; `what` says what is repeated.
CLI::Option* add_repeat_option(CLI::App* cmd, int& target, const std::string& what);
// --timeout SECONDS within `range` (seconds_between, or number_between(..., "seconds")).
CLI::Option* add_timeout_option(CLI::App* cmd, double& seconds, const std::string& what, CLI::Validator range);
// A hidden millisecond spelling of a timeout (e.g. --deadline-ms): still accepted, converted
// into `seconds`, and answered with one deprecation line naming the option to use.
void add_deprecated_ms_alias(CLI::App* cmd, const std::string& name, double& seconds, const std::string& instead,
                             long long max_ms);
// --seed SEED (and --replay SEED unless `replay` is null); `what` names what is drawn.
void add_seed_options(CLI::App* cmd, std::string& seed, std::string* replay, const std::string& what);

// Numeric options. Every one is checked by one of these before CLI11 converts it: the
// text must be a plain number within the range the command can honour; NaN, infinities,
// words, fractions where a whole number is wanted and values out of range are refused
// with the option's name and the range (exit 2), e.g.
//   --repeat: expected a whole number in 1..10000, got 'nan'
// A whole number, decimal, within [min, max].
CLI::Validator integer_between(long long min, long long max);
// The same for unsigned 64-bit values (no sign accepted).
CLI::Validator unsigned_between(std::uint64_t min, std::uint64_t max);
// A finite number within [min, max] (exclusive where `open_min` / `open_max`);
// `unit` names what it counts in the messages ("seconds").
CLI::Validator number_between(double min, double max, const std::string& unit = "", bool open_min = false,
                              bool open_max = false);
// A number of seconds: finite, within [min, max] (NaN, inf, 0 and negatives refused).
CLI::Validator seconds_between(double min, double max);

// The one style of every bad-input message, whoever finds it (CLI11's parser, a
// command's own checks, main's unknown subcommand):
//   cudadiag <command>: <what is wrong>
// on one line of stderr, shown inert (printable), and exit 2 (kExitUsage) by the caller.
// A message that already starts with the command's name ("fault: unknown case ...")
// does not say it twice; `command` empty: "cudadiag: <what is wrong>".
std::string usage_message(const std::string& command, const std::string& what);
void print_usage_error(const std::string& command, const std::string& what);
// The subcommand named on a command line (argv[1] when it is one), "" otherwise.
std::string subcommand_of(const CLI::App& root, const std::vector<std::string>& argv);

// Applies -q/-v and colour rules to the stderr logger.
void configure_logging(const CommonOptions& opts);

// True when colour may be used on stdout (a terminal, NO_COLOR unset or empty, --no-color absent).
bool use_color(const CommonOptions& opts);

// After SIGINT/SIGTERM/SIGHUP: marks the report invocation.interrupted and says so in
// the verdict's reasons (what it holds is what finished). emit_report calls it.
void mark_interrupted(report::Report& r);

// Renders the report in opts.report_format, redacts with --redact (`secrets`: values the report
// cannot name by itself, such as run's --env values), validates nothing, and writes it to
// -o atomically or to stdout.
void emit_report(report::Report& r, const CommonOptions& opts, const report::RedactionInputs& secrets = {});

// What report::redact needs for this command: the tokens of --redact-key or the
// environment, and `secrets` (values the report cannot name by itself).
report::RedactionInputs redaction_inputs(const CommonOptions& opts, report::RedactionInputs secrets = {});

// Writes already-rendered text to -o (util/atomic_file.h says how) or to stdout.
void emit_text(const std::string& text, const CommonOptions& opts);

}  // namespace cudadiag::app

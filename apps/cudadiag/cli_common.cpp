#include "cli_common.h"

#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "evidence/interruption.h"
#include "report/redact.h"
#include "report/render.h"
#include "runner/runner.h"
#include "util/atomic_file.h"
#include "util/interrupt.h"
#include "util/log.h"
#include "util/printable.h"

namespace cudadiag::app {
CLI::Option* add_coredump_option(CLI::App* cmd, bool& target) {
  return cmd->add_flag("--coredump", target,
                       "Arm GPU core dumps (CUDA_ENABLE_COREDUMP_ON_EXCEPTION) and read the fault site from them: "
                       "kernel, line, thread, faulting address (the driver ends the process after the dump; the "
                       "kernel log's Xid 31 lines then carry no address)");
}

namespace {
Invocation g_invocation;
}  // namespace

const Invocation& invocation() { return g_invocation; }
void set_invocation(Invocation inv) { g_invocation = std::move(inv); }

void add_common_options(CLI::App* cmd, CommonOptions& opts) {
  CLI::Option* format = cmd->add_option("--format", opts.format,
                                         "Output format (default: from -o's extension .json/.md/.txt, else text)")
                            ->check(CLI::IsMember({"text", "json", "md"}))
                            ->capture_default_str();
  cmd->add_option("-o,--output", opts.output,
                  "Write the output to FILE instead of stdout (- is stdout): atomically, as a new file owned by you, "
                  "mode 0644 or tighter; another user's link or file in a shared directory, or a FIFO, is refused. "
                  "Checked before any work starts")
      ->type_name("FILE");
  cmd->add_flag("-q,--quiet", opts.quiet, "Only errors on stderr");
  cmd->add_flag("-v,--verbose", opts.verbose, "More detail on stderr (repeat for debug)");
  cmd->add_flag("--redact", opts.redact,
                "Replace the hostname (long and short, any case), serials, UUIDs, PCI ids and run's --env values "
                "with tokens, wherever they appear: keyed by the site key (--redact-key, CUDADIAG_REDACT_KEY_FILE, "
                "CUDADIAG_REDACT_KEY) so reports of one key pair up, else random per report");
  cmd->add_option("--redact-key", opts.redact_key_file,
                  "File holding the site's redaction key (16 bytes or more, not readable by every user); implies "
                  "--redact")
      ->type_name("FILE");
  cmd->add_flag("--no-color", opts.no_color, "Never use colour (NO_COLOR is honoured too)");
  // Once the options are read, before the command's work: -o FILE.json / .md picks the
  // format unless --format was given, and an output path that cannot be written is an
  // error now (exit 2), not after a long run.
  cmd->parse_complete_callback([&opts, format] {
    if (format->count() == 0)
      if (const auto f = report::format_for_path(opts.output)) opts.format = std::string(report::to_string(*f));
    check_output_path(opts.output);
    if (!opts.redact_key_file.empty()) opts.redact = true;
    if (opts.redact)
      opts.redaction = report::redaction_tokens(opts.redact_key_file, [](const char* name) {
        return static_cast<const char*>(std::getenv(name));
      });
  });
}

CLI::Option* add_allocator_option(CLI::App* cmd, profiles::Allocator& target) {
  std::vector<std::string> names{"fence"};
  for (const auto& a : profiles::kAllocators) names.emplace_back(a.name);
  return cmd
      ->add_option_function<std::string>(
          "--allocator", [&target](const std::string& s) { target = *profiles::parse_allocator(s); },
          "Device memory for the buffers: pool (slabs: overruns silent), direct (one cudaMalloc per buffer), "
          "fence-back / fence-front (flush against unmapped memory: one element past the end / before the start "
          "faults); fence means fence-back (default pool)")
      ->check(CLI::IsMember(names));
}

namespace {

// 10000000 rather than 1e+07: ranges read as the numbers a user types.
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}

std::string shown_input(const std::string& text) { return "'" + printable(text) + "'"; }

// A decimal whole number within [min, max] (T's own range at most); "" when it is one.
template <class T>
std::string check_whole_number(const std::string& text, T min, T max, const std::string& range) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ptr != end || ec == std::errc::invalid_argument)
    return "expected a whole number in " + range + ", got " + shown_input(text);
  if (ec == std::errc::result_out_of_range || v < min || v > max)
    return "expected a whole number in " + range + ", got " + shown_input(text) + " (out of range)";
  return "";
}

}  // namespace

CLI::Validator integer_between(long long min, long long max) {
  const std::string range = fmt::format("{}..{}", min, max);
  return CLI::Validator([=](std::string& text) { return check_whole_number(text, min, max, range); },
                        range);
}

CLI::Validator unsigned_between(std::uint64_t min, std::uint64_t max) {
  const std::string range = fmt::format("{}..{}", min, max);
  return CLI::Validator([=](std::string& text) { return check_whole_number(text, min, max, range); },
                        range);
}

CLI::Validator number_between(double min, double max, const std::string& unit, bool open_min, bool open_max) {
  const std::string what = unit.empty() ? "a number" : "a number of " + unit;
  std::string range;
  if (!open_min && !open_max) {
    range = "in " + number_text(min) + ".." + number_text(max);
  } else {
    range = std::string(open_min ? "above " : "from ") + number_text(min) + (open_max ? " and below " : " up to ") +
            number_text(max);
  }
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(text.front())) ||
            !std::isfinite(v))
          return "expected " + what + " " + range + ", got " + shown_input(text);
        const bool low = open_min ? !(v > min) : !(v >= min);
        const bool high = open_max ? !(v < max) : !(v <= max);
        if (low || high) return "expected " + what + " " + range + ", got " + shown_input(text) + " (out of range)";
        return "";
      },
      // The help's type column: "FLOAT:0..1", "FLOAT:above 0 up to 10000000 seconds".
      (range.rfind("in ", 0) == 0 ? range.substr(3) : range) + (unit.empty() ? "" : " " + unit));
}

CLI::Validator seconds_between(double min, double max) { return number_between(min, max, "seconds"); }

void configure_logging(const CommonOptions& opts) {
  if (opts.no_color) init_logging(false);
  if (opts.quiet) {
    spdlog::set_level(spdlog::level::err);
  } else if (opts.verbose >= 2) {
    spdlog::set_level(spdlog::level::trace);
  } else if (opts.verbose == 1) {
    spdlog::set_level(spdlog::level::debug);
  } else {
    spdlog::set_level(spdlog::level::info);
  }
}

bool use_color(const CommonOptions& opts) {
  if (opts.no_color || std::getenv("NO_COLOR") != nullptr) return false;
  if (!opts.output.empty() && opts.output != "-") return false;
  return ::isatty(STDOUT_FILENO) != 0;
}

void emit_text(const std::string& text, const CommonOptions& opts) {
  // A report that cannot go where asked is kept in a private file named in the error.
  const report::Format format = report::parse_format(opts.format);
  const char* extension = format == report::Format::json ? "json" : format == report::Format::md ? "md" : "txt";
  write_report(opts.output, text, extension);
  if (!opts.output.empty() && opts.output != "-") spdlog::info("wrote {}", printable(opts.output));
}

void mark_interrupted(report::Report& r) {
  if (!stop_requested()) return;
  evidence::record_interruption(r, true, "interrupted by " + runner::signal_name(stop_signal()) + ": results so far only");
}

report::RedactionInputs redaction_inputs(const CommonOptions& opts, report::RedactionInputs secrets) {
  secrets.tokens = opts.redaction;
  return secrets;
}

void emit_report(report::Report& r, const CommonOptions& opts, const report::RedactionInputs& secrets) {
  mark_interrupted(r);
  const auto format = report::parse_format(opts.format);
  if (opts.redact) report::redact(r, redaction_inputs(opts, secrets));
  emit_text(report::render(r, format, use_color(opts)), opts);
}

}  // namespace cudadiag::app

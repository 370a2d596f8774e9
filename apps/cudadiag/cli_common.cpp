#include "cli_common.h"

#include <unistd.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "report/redact.h"
#include "report/render.h"
#include "runner/runner.h"
#include "util/atomic_file.h"
#include "util/interrupt.h"
#include "util/log.h"
#include "util/printable.h"

namespace cudadiag::app {
namespace {
Invocation g_invocation;
}  // namespace

const Invocation& invocation() { return g_invocation; }
void set_invocation(Invocation inv) { g_invocation = std::move(inv); }

void add_common_options(CLI::App* cmd, CommonOptions& opts) {
  cmd->add_option("--format", opts.format, "Output format")
      ->check(CLI::IsMember({"text", "json", "md"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opts.output,
                  "Write the output to FILE instead of stdout (- is stdout): a file is replaced atomically "
                  "keeping its mode, a symlink's target likewise, a device or FIFO is written into");
  cmd->add_flag("-q,--quiet", opts.quiet, "Only errors on stderr");
  cmd->add_flag("-v,--verbose", opts.verbose, "More detail on stderr (repeat for debug)");
  cmd->add_flag("--redact", opts.redact,
                "Replace hostname, serials, UUIDs and PCI ids with stable hashes");
  cmd->add_flag("--no-color", opts.no_color, "Never use colour (NO_COLOR is honoured too)");
  cmd->preparse_callback([&opts](size_t) { (void)opts; });
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

CLI::Validator seconds_between(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v))
          return "'" + text + "' is not a number of seconds";
        if (v < min || v > max) return "'" + text + "' is outside " + fmt::format("{:g}..{:g}", min, max) + " seconds";
        return "";
      },
      fmt::format("SECONDS in {:g}..{:g}", min, max));
}

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
  write_output(opts.output, text);
  if (!opts.output.empty() && opts.output != "-") spdlog::info("wrote {}", printable(opts.output));
}

void mark_interrupted(report::Report& r) {
  if (!stop_requested()) return;
  r.invocation["interrupted"] = true;
  const std::string why = "interrupted by " + runner::signal_name(stop_signal()) + ": results so far only";
  for (const auto& reason : r.verdict.reasons)
    if (reason.rfind("interrupted", 0) == 0) return;
  r.verdict.reasons.push_back(why);
}

void emit_report(report::Report& r, const CommonOptions& opts, const report::RedactionInputs& secrets) {
  mark_interrupted(r);
  const auto format = report::parse_format(opts.format);
  if (opts.redact) report::redact(r, secrets);
  emit_text(report::render(r, format, use_color(opts)), opts);
}

}  // namespace cudadiag::app

#include "cli_common.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "report/redact.h"
#include "report/render.h"
#include "util/atomic_file.h"
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

void emit_report(report::Report& r, const CommonOptions& opts) {
  const auto format = report::parse_format(opts.format);
  if (opts.redact) {
    // Redaction works on the JSON form; round-trip so every renderer sees it.
    auto j = report::to_json(r);
    report::redact(j);
    r = report::report_from_json(j);
  }
  emit_text(report::render(r, format, use_color(opts)), opts);
}

}  // namespace cudadiag::app

// `cudadiag show REPORT.json`: a saved report (any command's, from any host) rendered
// as text or Markdown, or written back as JSON, the way the command that wrote it prints
// it. The report is read by the one loader for reports (lib/report): a malformed,
// truncated or foreign file is bad input, exit 2, naming what is wrong.
#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "compare/render_compare.h"
#include "report/json_document.h"
#include "report/render.h"
#include "report/report.h"
#include "report/vocabulary.h"
#include "tma/tma_report_view.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

struct ShowOptions {
  CommonOptions common;
  std::string path;
};

// The text the command that wrote the report prints: compare and tma have their own
// layouts (hosts, differences, suspects; descriptors with their rules' advice); every
// other command's is the report's own.
std::string shown(const report::Report& r, const CommonOptions& common, const std::string& path) {
  const auto format = report::parse_format(common.format);
  const auto command = report::parse_command(r.invocation.command);
  if (format != report::Format::json && command == report::Command::compare)
    return format == report::Format::md ? compare::render_compare_md(r) : compare::render_compare_text(r, use_color(common), common.verbose > 0);
  if (format != report::Format::json && command == report::Command::tma && r.extra.find("tma"))
    return tma::render_tma_report(r, format == report::Format::md, path);
  return report::render(r, format, use_color(common), common.verbose > 0);
}

void run_show(const ShowOptions& o) {
  configure_logging(o.common);
  report::Report r = report::report_from_json(report::load_json_document(o.path), o.path);
  emit_text(shown(r, o.common, o.path), o.common);
  set_exit_code(kExitOk);
}

}  // namespace

void set_show_command(CLI::App& app) {
  auto opts = std::make_shared<ShowOptions>();
  auto* cmd = app.add_subcommand(
      "show", "Render a saved report (repro, run, fault, attention, tma, index-select, env, compare) as text or "
              "Markdown, as the command that wrote it prints it");
  cmd->add_option("report", opts->path, "The report file (- reads standard input)")->required();
  add_common_options(cmd, opts->common);
  set_help_footer(cmd, "Exit codes: 0 shown, 2 unreadable or not a report.",
                  {"cudadiag show h100-a.json                 # the text a person reads",
                   "cudadiag show h100-a.json -o bug.md       # Markdown for a bug report"});
  cmd->callback([opts] { run_show(*opts); });
}

}  // namespace cudadiag::app

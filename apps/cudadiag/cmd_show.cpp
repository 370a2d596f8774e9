// `cudadiag show REPORT.json`: a saved report (any command's, from any host) rendered
// as text or Markdown, or written back as JSON, the way the command that wrote it prints
// it. The report is read by the one loader for reports (lib/report): a malformed,
// truncated or foreign file is bad input, exit 2, naming what is wrong.
#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "report/json_document.h"
#include "report/render.h"
#include "report/report.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

struct ShowOptions {
  CommonOptions common;
  std::string path;
};

void run_show(const ShowOptions& o) {
  configure_logging(o.common);
  report::Report r = report::report_from_json(report::load_json_document(o.path), o.path);
  emit_text(report::render(r, report::parse_format(o.common.format), use_color(o.common)), o.common);
  set_exit_code(kExitOk);
}

}  // namespace

void set_show_command(CLI::App& app) {
  auto opts = std::make_shared<ShowOptions>();
  auto* cmd = app.add_subcommand(
      "show", "Render a saved report (repro, run, fault, attention, tma, index-select, env) as text or Markdown");
  cmd->add_option("report", opts->path, "The report file (- reads standard input)")->required();
  add_common_options(cmd, opts->common);
  set_help_footer(cmd, "Exit codes: 0 shown, 2 unreadable or not a report.",
                  {"cudadiag show h100-a.json                 # the text a person reads",
                   "cudadiag show h100-a.json -o bug.md       # Markdown for a bug report"});
  cmd->callback([opts] { run_show(*opts); });
}

}  // namespace cudadiag::app

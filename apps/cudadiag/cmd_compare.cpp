// `cudadiag compare a.json b.json [c.json ...]`: what differs between hosts, and
// whether it matters. Reads reports only; never touches CUDA.
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "compare/compare.h"
#include "compare/render_compare.h"
#include "report/redact.h"
#include "report/render.h"
#include "util/errors.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

struct CompareCommandOptions {
  CommonOptions common;
  std::vector<std::string> files;
  double time_factor = 2.0;
  double alpha = 0.05;
};

void run_compare(const CompareCommandOptions& opts) {
  configure_logging(opts.common);
  if (opts.files.size() < 2)
    throw UsageError("compare: needs two or more report files (got " + std::to_string(opts.files.size()) + ")");
  if (!(opts.time_factor > 1.0))
    throw UsageError("--time-factor: must be greater than 1 (got " + std::to_string(opts.time_factor) + ")");
  if (!(opts.alpha > 0.0 && opts.alpha < 1.0))
    throw UsageError("--alpha: must be between 0 and 1 (got " + std::to_string(opts.alpha) + ")");

  std::vector<compare::LoadedReport> reports;
  for (const auto& f : opts.files) {
    reports.push_back(compare::load_report_file(f));
    spdlog::debug("loaded {}: {} results", f, reports.back().report.results.size());
  }
  compare::CompareOptions options;
  options.time_factor = opts.time_factor;
  options.alpha = opts.alpha;
  const auto comparison = compare::compare_reports(reports, options);
  auto r = compare::comparison_report(reports, comparison, options, invocation().argv);

  if (opts.common.redact) {
    auto j = report::to_json(r);
    report::redact(j);
    r = report::report_from_json(j);
  }
  const auto format = report::parse_format(opts.common.format);
  std::string text;
  if (format == report::Format::json) {
    text = report::render(r, format);
  } else if (format == report::Format::md) {
    text = compare::render_compare_md(r);
  } else {
    text = compare::render_compare_text(r, use_color(opts.common));
  }
  emit_text(text, opts.common);
  set_exit_code(report::exit_code_for(r.verdict.status));
}

}  // namespace

void set_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareCommandOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare reports from several hosts: environment diff, outcome diff, failure-rate tests and a "
      "verdict (same, host_specific, flaky, config_mismatch)");
  cmd->add_option("reports", opts->files, "Two or more report files written by cudadiag (- reads stdin)")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--time-factor", opts->time_factor,
                  "Note timings that differ by more than this factor between hosts")
      ->capture_default_str();
  cmd->add_option("--alpha", opts->alpha, "Significance level of the failure-rate tests (Fisher's exact)")
      ->capture_default_str();
  add_common_options(cmd, opts->common);
  cmd->footer("Exit codes: 0 same, 1 findings (host_specific, flaky, config_mismatch), 2 bad input.");
  cmd->callback([opts] { run_compare(*opts); });
}

}  // namespace cudadiag::app

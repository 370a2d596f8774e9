// `cudadiag compare REPORT... | DIR | 'GLOB'`: what differs between hosts, and whether
// it matters. Reads reports only; never touches CUDA.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "compare/compare.h"
#include "compare/render_compare.h"
#include "compare/report_files.h"
#include "report/redact.h"
#include "report/render.h"
#include "util/errors.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

// Seconds since the last lap, for -v: where a fleet comparison spends its time.
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

struct CompareCommandOptions {
  CommonOptions common;
  std::vector<std::string> inputs;
  double time_factor = 2.0;
  double alpha = 0.05;
  unsigned jobs = 0;
  bool strict = false;
  bool summary_line = false;
};

void run_compare(const CompareCommandOptions& opts) {
  configure_logging(opts.common);
  if (!(opts.time_factor > 1.0))
    throw UsageError("--time-factor: must be greater than 1 (got " + std::to_string(opts.time_factor) + ")");
  if (!(opts.alpha > 0.0 && opts.alpha < 1.0))
    throw UsageError("--alpha: must be between 0 and 1 (got " + std::to_string(opts.alpha) + ")");

  Stopwatch clock;
  const auto paths = compare::expand_report_paths(opts.inputs);
  auto set = compare::load_report_set(paths, opts.jobs, opts.strict);
  if (set.reports.size() < 2)
    throw UsageError("compare: needs two or more reports (got " + std::to_string(set.reports.size()) + ")");
  spdlog::debug("read {} reports in {:.2f} s ({} distinct strings)", set.reports.size(), clock.lap(),
                set.tables->strings.size());
  compare::CompareOptions options;
  options.time_factor = opts.time_factor;
  options.alpha = opts.alpha;
  const auto comparison = compare::compare_digests(std::move(set), options);
  spdlog::debug("compared in {:.2f} s", clock.lap());
  auto r = compare::comparison_report(comparison, options, invocation().argv);
  spdlog::debug("built the report in {:.2f} s", clock.lap());

  if (opts.common.redact) report::redact(r, redaction_inputs(opts.common));
  const auto format = report::parse_format(opts.common.format);
  std::string text;
  if (format == report::Format::json) {
    text = report::render(r, format);
  } else if (format == report::Format::md) {
    text = compare::render_compare_md(r);
  } else {
    text = compare::render_compare_text(r, use_color(opts.common), opts.common.verbose > 0);
  }
  emit_text(text, opts.common);
  spdlog::debug("rendered and wrote it in {:.2f} s", clock.lap());
  if (opts.summary_line)
    std::fprintf(stderr, "cudadiag compare: %s: %s\n", std::string(report::to_string(r.verdict.status)).c_str(),
                 compare::summary_sentence(r).c_str());
  set_exit_code(report::exit_code_for(r.verdict.status));
}

}  // namespace

void set_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareCommandOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare reports from several hosts, or a whole fleet: environment diff, outcome diff, groups of identical "
      "hosts, failure-rate tests and a verdict (same, host_specific, flaky, config_mismatch)");
  cmd->add_option("reports", opts->inputs,
                  "Two or more reports: files (- reads stdin), directories (every *.json inside) or quoted "
                  "glob patterns ('reports/*.json')")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--time-factor", opts->time_factor,
                  "Note per-run kernel times (the repeats' in-child seconds, 20 runs and 10 ms at least on each "
                  "side) that differ by more than this factor between hosts")
      ->check(number_between(1.0, 1e6, "", /*open_min=*/true))
      ->capture_default_str();
  cmd->add_option("--alpha", opts->alpha,
                  "Significance level of the failure-rate tests (Fisher's exact), for the whole comparison: "
                  "Holm-corrected over the cases compared")
      ->check(number_between(0.0, 1.0, "", /*open_min=*/true, /*open_max=*/true))
      ->capture_default_str();
  cmd->add_flag("--strict", opts->strict,
                "A report found in a directory or by a pattern that cannot be read is an error (exit 2); "
                "by default it is passed over with a note naming it");
  cmd->add_option("-j,--jobs", opts->jobs, "Reports read at once (default or 0: one per CPU, at most 8)")
      ->check(integer_between(0, 256));
  cmd->add_flag("--summary-line", opts->summary_line,
                "Also print the verdict and its one-sentence summary as one line on stderr (for job logs)");
  add_common_options(cmd, opts->common);
  cmd->footer(
      "From four reports on, text and Markdown show groups of identical hosts and the hosts that stand out; "
      "the JSON report lists every host.\n"
      "Each host is judged by its own expectation: a case that meets it everywhere is no difference, and a "
      "race's rates (expected at a rate, met) are a note. Other cudadiag builds weaken the comparison; they "
      "are never a finding.\n"
      "Exit codes: 0 same, 1 findings (host_specific, flaky, config_mismatch), 2 bad input.");
  set_help_footer(cmd, cmd->get_footer(),
                  {"cudadiag compare h100-a.json h100-b.json   # two hosts",
                   "cudadiag compare fleet/ -o fleet.md        # every report in a folder"});
  cmd->callback([opts] { run_compare(*opts); });
}

}  // namespace cudadiag::app

// cudadiag schema: prints the report's JSON Schema (embedded at build time).
// Hidden: `cudadiag schema --validate FILE` checks a report file against it
// (0 valid, 1 violations listed, 2 unreadable or malformed JSON).
#include <algorithm>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "report/json_document.h"
#include "report/render.h"
#include "report/schema.h"
#include "util/errors.h"
#include "util/log.h"
#include "util/printable.h"

namespace cudadiag::app {
namespace {

using report::json;

struct SchemaOptions {
  CommonOptions common;
  std::string validate_path;
  bool format_given = false;  // --format on the command line (the default differs per mode)
};

// Violations of the schema, plus a schema_version whose major differs from this build's.
std::vector<std::string> check_report(const json& doc) {
  auto errors = report::validate_report(doc);
  if (doc.is_object() && doc.contains("schema_version") && doc["schema_version"].is_string()) {
    const auto theirs = report::parse_semver(doc["schema_version"].get<std::string>());
    const auto ours = report::parse_semver(report::kSchemaVersion);
    if (theirs && ours && theirs->major != ours->major) {
      errors.push_back("/schema_version: major version " + std::to_string(theirs->major) +
                       " is not readable by this build (schema " + report::kSchemaVersion + ")");
    }
  }
  return errors;
}

std::string render_validation(const std::string& path, const json& doc, const std::vector<std::string>& errors,
                              report::Format format) {
  const std::string version =
      doc.is_object() && doc.contains("schema_version") && doc["schema_version"].is_string()
          ? doc["schema_version"].get<std::string>()
          : "";
  if (format == report::Format::json) {
    json j{{"file", path}, {"valid", errors.empty()}, {"schema_version", version},
           {"checked_against", report::kSchemaVersion}, {"errors", errors}};
    return report::dump_json(j, 2) + "\n";
  }
  const bool md = format == report::Format::md;
  std::string out = md ? "### " : "";
  if (errors.empty()) {
    out += printable(path) + ": valid cudadiag report (schema_version " + printable(version) + ")\n";
    return out;
  }
  out += printable(path) + ": " + std::to_string(errors.size()) + " problem(s) against the report schema " +
         report::kSchemaVersion + "\n";
  if (md) out += "\n";
  for (const auto& e : errors) out += (md ? "- `" + printable(e) + "`" : "  " + printable(e)) + "\n";
  return out;
}

void run_validate(const SchemaOptions& opts) {
  const json doc = report::load_json_document(opts.validate_path);
  const auto errors = check_report(doc);
  // The schema itself defaults to JSON; a validation verdict is for people unless asked.
  const report::Format format = opts.format_given ? report::parse_format(opts.common.format) : report::Format::text;
  emit_text(render_validation(opts.validate_path, doc, errors, format), opts.common);
  set_exit_code(errors.empty() ? kExitOk : kExitFindings);
}

void run_schema(const SchemaOptions& opts) {
  configure_logging(opts.common);
  if (!opts.validate_path.empty()) return run_validate(opts);
  std::string text = report::report_schema_text();
  if (text.empty() || text.back() != '\n') text += '\n';
  if (report::parse_format(opts.common.format) == report::Format::md) text = "```json\n" + text + "```\n";
  emit_text(text, opts.common);
  set_exit_code(kExitOk);
}

}  // namespace

void set_schema_command(CLI::App& app) {
  auto opts = std::make_shared<SchemaOptions>();
  opts->common.format = "json";
  auto* cmd = app.add_subcommand(
      "schema", "Print the JSON Schema (draft 2020-12) of the report that every command writes");
  add_common_options(cmd, opts->common);
  // Hidden (empty group): a check for report files, used by tests and by scripts.
  cmd->add_option("--validate", opts->validate_path,
                  "Validate a report file against the schema (exit 0 valid, 1 invalid, 2 unreadable)")
      ->group("");
  set_help_footer(cmd, "Exit codes: 0 written, 2 bad input.",
                  {"cudadiag schema -o report.schema.json"});
  cmd->callback([opts, cmd] {
    opts->format_given = cmd->count("--format") > 0;
    run_schema(*opts);
  });
}

}  // namespace cudadiag::app

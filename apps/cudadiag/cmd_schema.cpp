// cudadiag schema: prints the report's JSON Schema (embedded at build time).
// Hidden: `cudadiag schema --validate FILE` checks a report file against it
// (0 valid, 1 violations listed, 2 unreadable or malformed JSON).
#include <algorithm>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "report/json_document.h"
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

// "line 3, column 7 (byte 41)" for a 1-based byte offset as nlohmann reports it.
std::string position_in(const std::string& text, size_t byte) {
  const size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
         std::to_string(byte) + ")";
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string parse_reason(const json::parse_error& e) {
  const std::string what = e.what();
  const size_t column = what.find("column ");
  const size_t colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

json parse_report_file(const std::string& path, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path, position_in(text, e.byte), "malformed JSON: " + parse_reason(e));
  }
}

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
                              const std::string& format) {
  const std::string version =
      doc.is_object() && doc.contains("schema_version") && doc["schema_version"].is_string()
          ? doc["schema_version"].get<std::string>()
          : "";
  if (format == "json") {
    json j{{"file", path}, {"valid", errors.empty()}, {"schema_version", version},
           {"checked_against", report::kSchemaVersion}, {"errors", errors}};
    return report::dump_json(j, 2) + "\n";
  }
  const bool md = format == "md";
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
  const std::string text = read_file_or_stdin(opts.validate_path);
  const json doc = parse_report_file(opts.validate_path, text);
  const auto errors = check_report(doc);
  // The schema itself defaults to JSON; a validation verdict is for people unless asked.
  const std::string format = opts.format_given ? opts.common.format : "text";
  emit_text(render_validation(opts.validate_path, doc, errors, format), opts.common);
  set_exit_code(errors.empty() ? kExitOk : kExitFindings);
}

void run_schema(const SchemaOptions& opts) {
  configure_logging(opts.common);
  if (!opts.validate_path.empty()) return run_validate(opts);
  std::string text = report::report_schema_text();
  if (text.empty() || text.back() != '\n') text += '\n';
  if (opts.common.format == "md") text = "```json\n" + text + "```\n";
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
  cmd->callback([opts, cmd] {
    opts->format_given = cmd->count("--format") > 0;
    run_schema(*opts);
  });
}

}  // namespace cudadiag::app

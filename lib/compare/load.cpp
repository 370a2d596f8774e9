#include "compare/load.h"

#include <cstdio>
#include <map>
#include <stdexcept>

#include "compare/digest.h"
#include "report/json_document.h"
#include "report/json_reader.h"
#include "util/atomic_file.h"
#include "util/errors.h"

namespace cudadiag::compare {
namespace {

// nlohmann's message reads "[json.exception.parse_error.101] parse error at line 3,
// column 1: syntax error while parsing ..."; keep only the part after the position,
// since the position is reported in our own words.
std::string parse_error_reason(const std::string& what) {
  if (what.rfind("[json.exception", 0) != 0) return what;
  const auto column = what.find("column ");
  const auto colon = what.find(": ", column == std::string::npos ? 0 : column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

InputError json_syntax_error(std::string_view text, std::size_t offset, const std::string& reason,
                             const std::string& file) {
  std::size_t line = 1, column = 1;
  line_column(text, offset, line, column);
  std::string why = parse_error_reason(reason);
  if (why.find("unexpected end of input") != std::string::npos) why += " (the file looks truncated)";
  return InputError(file,
                    "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
                        std::to_string(offset) + ")",
                    "malformed JSON: " + why);
}

void check_schema_version(const report::json& doc, const std::string& file, std::vector<std::string>& notes) {
  const auto& v = report::JsonReader(file).required(doc, "schema_version", "");
  if (!v.is_string())
    throw InputError(file, "/schema_version", "must be a string like \"1.0.0\"");
  SchemaVersion theirs, ours;
  if (!parse_schema_version(v.get<std::string>(), theirs))
    throw InputError(file, "/schema_version",
                     "'" + v.get<std::string>() + "' is not MAJOR.MINOR.PATCH");
  parse_schema_version(report::kSchemaVersion, ours);
  if (theirs.major != ours.major) {
    throw InputError(file, "/schema_version",
                     "schema version " + v.get<std::string>() + " has major version " +
                         std::to_string(theirs.major) + "; this cudadiag reads " +
                         std::to_string(ours.major) + ".x (" + report::kSchemaVersion +
                         "). Compare it with a cudadiag of the same major version");
  }
  if (theirs.minor > ours.minor) {
    notes.push_back(file + ": written with schema " + v.get<std::string>() + ", newer than " +
                    report::kSchemaVersion + "; keys this version does not know are ignored");
  }
}

void check_required_sections(const report::json& doc, const std::string& file) {
  std::string missing;
  for (const auto& key : required_sections()) {
    if (doc.contains(key)) continue;
    missing += (missing.empty() ? "" : ", ") + key;
  }
  if (!missing.empty()) throw InputError(file, "", "missing required section(s): " + missing);
  static const std::map<std::string, bool> must_be_object = {
      {"tool", true}, {"host", true}, {"driver", true}, {"devices", false}, {"results", false}};
  for (const auto& [key, object] : must_be_object) {
    const auto& section = doc.at(key);
    if (object ? !section.is_object() : !section.is_array())
      throw InputError(file, "/" + key,
                       std::string("must be ") + (object ? "an object" : "an array") + ", found " +
                           section.type_name());
  }
}

void check_report_head(const report::json& doc, const std::string& file, std::vector<std::string>& notes) {
  if (!doc.is_object())
    throw InputError(file, "", std::string("not a cudadiag report (top level is ") + doc.type_name() +
                                   ", expected an object)");
  check_required_sections(doc, file);
  check_schema_version(doc, file, notes);
}

bool parse_schema_version(const std::string& text, SchemaVersion& out) {
  // One reading of versions for every part of cudadiag (bounded digits, no overflow).
  const auto v = report::parse_semver(text);
  if (!v) return false;
  out = {v->major, v->minor, v->patch};
  return true;
}

const std::vector<std::string>& required_sections() {
  static const std::vector<std::string> sections = {"schema_version", "tool",    "host",
                                                    "driver",         "devices", "results"};
  return sections;
}

void line_column(std::string_view text, std::size_t byte_offset, std::size_t& line,
                 std::size_t& column) {
  report::line_column(text, byte_offset, line, column);
}

LoadedReport load_report_text(const std::string& text, const std::string& file) {
  LoadedReport out;
  out.file = file;
  const auto doc = report::parse_json_document(text, file);
  check_report_head(doc, file, out.notes);
  out.report = report::report_from_json(doc, file);
  return out;
}

LoadedReport load_report_file(const std::string& path) {
  return load_report_text(read_file_or_stdin(path), report::source_name(path));
}

void label_reports(std::vector<LoadedReport>& reports) {
  std::vector<std::string> files, hostnames;
  for (const auto& r : reports) {
    const auto& h = r.report.host;
    files.push_back(r.file);
    hostnames.push_back(h.hostname.value_or(""));
  }
  const auto labels = unique_labels(files, hostnames);
  for (std::size_t i = 0; i < reports.size(); ++i) reports[i].label = labels[i];
}

}  // namespace cudadiag::compare

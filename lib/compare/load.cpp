#include "compare/load.h"

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/json_document.h"
#include "report/json_reader.h"
#include "util/atomic_file.h"
#include "util/errors.h"

namespace cudadiag::compare {
namespace {

void check_schema_version(const report::json& doc, LoadedReport& out) {
  const report::JsonReader rd(out.file);
  const auto& v = rd.required(doc, "schema_version", "");
  if (!v.is_string()) rd.fail("/schema_version", "must be a string like \"1.0.0\"");
  const std::string text = v.get<std::string>();
  SchemaVersion theirs, ours;
  if (!parse_schema_version(text, theirs))
    throw InputError(out.file, "/schema_version", "'" + text + "' is not MAJOR.MINOR.PATCH");
  parse_schema_version(report::kSchemaVersion, ours);
  if (theirs.major != ours.major) {
    throw InputError(out.file, "/schema_version",
                     "schema version " + text + " has major version " +
                         std::to_string(theirs.major) + "; this cudadiag reads " +
                         std::to_string(ours.major) + ".x (" + report::kSchemaVersion +
                         "). Compare it with a cudadiag of the same major version");
  }
  if (theirs.minor > ours.minor) {
    out.notes.push_back(out.file + ": written with schema " + text +
                        ", newer than " + report::kSchemaVersion +
                        "; keys this version does not know are ignored");
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

}  // namespace

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

void line_column(const std::string& text, std::size_t byte_offset, std::size_t& line,
                 std::size_t& column) {
  report::line_column(text, byte_offset, line, column);
}

LoadedReport load_report_text(const std::string& text, const std::string& file) {
  LoadedReport out;
  out.file = file;
  const auto doc = report::parse_json_document(text, file);
  if (!doc.is_object())
    throw InputError(file, "", std::string("not a cudadiag report (top level is ") +
                                   doc.type_name() + ", expected an object)");
  check_required_sections(doc, file);
  check_schema_version(doc, out);
  out.report = report::report_from_json(doc, file);
  return out;
}

LoadedReport load_report_file(const std::string& path) {
  return load_report_text(read_file_or_stdin(path), report::source_name(path));
}

void label_reports(std::vector<LoadedReport>& reports) {
  std::map<std::string, int> uses;
  auto hostname = [](const LoadedReport& r) {
    const auto& h = r.report.host;
    return h.contains("hostname") && h["hostname"].is_string() ? h["hostname"].get<std::string>()
                                                               : std::string();
  };
  bool hostnames_usable = true;
  for (const auto& r : reports) {
    const auto name = hostname(r);
    if (name.empty() || uses[name]++ > 0) hostnames_usable = false;
  }
  std::set<std::string> taken;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    auto& r = reports[i];
    std::string label = hostnames_usable ? hostname(r)
                                         : std::filesystem::path(r.file).filename().string();
    if (label.empty() || taken.count(label)) label += fmt::format("#{}", i + 1);
    taken.insert(label);
    r.label = label;
  }
}

}  // namespace cudadiag::compare

#pragma once
// Loading the reports to compare: any cudadiag report (repro, env, a single kernel
// run). Every problem becomes an InputError naming the file and the place, so that a
// truncated upload or a report from an incompatible version is refused clearly.
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "util/errors.h"

namespace cudadiag::compare {

struct SchemaVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
};

// Parses "MAJOR.MINOR.PATCH" (a pre-release suffix after '-' is ignored).
// Returns false when the text is not a version.
bool parse_schema_version(const std::string& text, SchemaVersion& out);

struct LoadedReport {
  std::string file;                // as given on the command line
  std::string label;               // short host label used in tables (set by label_reports)
  report::Report report;
  std::vector<std::string> notes;  // e.g. "written by a newer minor schema version"
};

// Sections a report must carry to be compared (every cudadiag command writes them).
const std::vector<std::string>& required_sections();

// Parses and checks one report; `file` names it in error messages.
// Throws InputError (exit 2) on malformed JSON (with line:column), another major
// schema version, missing sections or a document that does not fit the model.
LoadedReport load_report_text(const std::string& text, const std::string& file);

// Reads the file ("-" is standard input) and calls load_report_text.
LoadedReport load_report_file(const std::string& path);

// Line and column (both 1-based) of a byte offset into text.
void line_column(std::string_view text, std::size_t byte_offset, std::size_t& line, std::size_t& column);

// The error for malformed JSON at a byte offset: "FILE: line L, column C (byte B):
// malformed JSON: REASON" (nlohmann's own position prefix is dropped from REASON).
InputError json_syntax_error(std::string_view text, std::size_t offset, const std::string& reason,
                             const std::string& file);

// The checks of check_report_head, one by one.
void check_schema_version(const report::json& doc, const std::string& file, std::vector<std::string>& notes);
void check_required_sections(const report::json& doc, const std::string& file);

// Checks a report's top level: an object with every required section of the right
// type, and a schema version this cudadiag reads (a newer minor adds a note).
void check_report_head(const report::json& doc, const std::string& file, std::vector<std::string>& notes);

// Gives each report a short unique label: the hostname when the hostnames differ,
// otherwise the file name (and a position suffix when those clash too).
void label_reports(std::vector<LoadedReport>& reports);

}  // namespace cudadiag::compare

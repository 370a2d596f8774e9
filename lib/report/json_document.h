#pragma once
// The one place JSON from outside is parsed: reports (compare, schema --validate),
// suites (repro --suite FILE) and anything else a user hands in, from a file or stdin.
//
// Hostile documents are refused before they can hurt: nesting deeper than
// kMaxJsonDepth (nlohmann's copy and destruction recurse once per level, so a
// 100000-level document overflows the stack long after parsing), numbers that do not
// fit a double (1e999), invalid UTF-8 and syntax errors all become an InputError that
// names the source and the line and column (exit 2).
#include <cstddef>
#include <string>
#include <string_view>

#include "report/report.h"

namespace cudadiag::report {

// No report or suite comes near this: the deepest report section is about 8 levels.
inline constexpr std::size_t kMaxJsonDepth = 128;

// What a document nested deeper than kMaxJsonDepth is told (every reader of outside JSON).
std::string too_deep_message();

// Parses `text`; `source` names it in messages ("reports/a.json", "<stdin>").
json parse_json_document(std::string_view text, const std::string& source);

// Reads `path` ("-" reads standard input, named "<stdin>") and parses it.
json load_json_document(const std::string& path);

// How `path` is named in messages: "<stdin>" for "-", else the path itself.
std::string source_name(const std::string& path);

// Line and column (both 1-based) of a 0-based byte offset into text.
void line_column(std::string_view text, std::size_t byte_offset, std::size_t& line, std::size_t& column);
// "line 3, column 7 (byte 41)" for a 0-based byte offset into text.
std::string text_position(std::string_view text, std::size_t byte_offset);

}  // namespace cudadiag::report

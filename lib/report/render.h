#pragma once
// Renderers for a report: text (a readable table), json, md (for a bug report).
#include <optional>
#include <string>
#include <string_view>

#include "report/report.h"

namespace cudadiag::report {

enum class Format { text, json, md };

// Throws UsageError for anything but text|json|md.
Format parse_format(const std::string& text);

// The format a file name asks for by its extension: .json, .md or .markdown, .txt; none
// for any other name (and for "-", standard output).
std::optional<Format> format_for_path(std::string_view path);
std::string_view to_string(Format f);

// color: ANSI colour in the text format (only on a terminal, never with NO_COLOR).
// verbose (-v): text and Markdown also show what the JSON keeps for tools: a command's own
// section (run's plan, repro's suite), a result's details; each reason is said once.
std::string render(const Report& r, Format format, bool color = false, bool verbose = false);

}  // namespace cudadiag::report

#pragma once
// Renderers for a report: text (a readable table), json, md (for a bug report).
#include <string>

#include "report/report.h"

namespace cudadiag::report {

enum class Format { text, json, md };

// Throws UsageError for anything but text|json|md.
Format parse_format(const std::string& text);

// color: ANSI colour in the text format (only on a terminal, never with NO_COLOR).
std::string render(const Report& r, Format format, bool color = false);

}  // namespace cudadiag::report

#pragma once
// Rendering a compare report (command "compare", extra["comparison"]) as text for a
// terminal or as Markdown to paste into a bug report: a short summary, the
// environment table (field | host A | host B ...), the outcome table, the rate tests
// with p-values and the ranked suspects. JSON output is the report itself.
#include <string>

#include "report/report.h"

namespace cudadiag::compare {

// From four reports on, the text is a summary that fits one screen (the verdict, its
// first reasons, the largest groups and the hosts that stand out); `verbose` (-v) adds
// every table. Two or three reports: every table, a column per host.
std::string render_compare_text(const report::Report& r, bool color = false, bool verbose = false);
std::string render_compare_md(const report::Report& r);

// One-sentence summary of the verdict, shared by both renderers.
std::string summary_sentence(const report::Report& r);

}  // namespace cudadiag::compare

#pragma once
// The layouts behind render(): a terminal table and GitHub-flavoured Markdown.
#include <string>

#include "report/report.h"

namespace cudadiag::report {

std::string render_text(const Report& r, bool color, bool verbose = false);
std::string render_markdown(const Report& r, bool verbose = false);

}  // namespace cudadiag::report

#pragma once
// A `tma` report rendered as the command prints it, from the report alone: `cudadiag tma`
// renders its own finished report through this, and `cudadiag show` a saved one, so the
// two cannot drift apart. The rows of report.tma are read back into items and validated
// again for the report's target (the validator is pure), which brings back every finding
// with its `fix:` advice; the device part comes from each row's driver and load answers.
#include <string>
#include <vector>

#include "report/report.h"
#include "tma/tma_check.h"

namespace cudadiag::tma {

// The items of report.tma (extra["tma"]), validated for its target_cc; table_mode: the
// rows are the rule table's (they carry the table's expected errors). Throws InputError
// naming `file` and the member when the section is missing or malformed.
struct ReportItems {
  std::vector<Item> items;
  bool table_mode = false;
};
ReportItems items_from_report(const report::Report& r, const std::string& file);

// What `cudadiag tma` prints for the report: the matrix and details, then the verdict
// with its reasons (text or Markdown). `file`: where the report came from, for errors.
std::string render_tma_report(const report::Report& r, bool md, const std::string& file);

}  // namespace cudadiag::tma

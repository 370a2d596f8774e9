#pragma once
// The fleet layout of a compare report (host_list.h: from four reports on): groups of
// identical hosts with a count and an example, the environment and outcomes as value
// counts, the rate tests per environment group, the hosts that stand out, each table
// capped at a few rows. The JSON report keeps every host.
#include <vector>

#include "compare/render_tables.h"
#include "report/report.h"

namespace cudadiag::compare {

// The tables, in reading order; `cmp` is extra["comparison"].
std::vector<Section> fleet_sections(const report::json& cmp);
// What the text shows without -v: the largest groups and the hosts that stand out, each
// capped at a few rows and a few values per cell, so that a fleet reads in one screen.
std::vector<Section> fleet_summary_sections(const report::json& cmp);

// "10000 reports in 3 groups of identical hosts; 6 hosts stand out; own verdicts: healthy 9994, suspect 6."
std::string fleet_sentence(const report::json& cmp);

}  // namespace cudadiag::compare

#pragma once
// The reports a comparison reads: the files, directories and glob patterns of a
// command line, streamed into digests a few files at a time.
#include <string>
#include <vector>

#include "compare/digest.h"

namespace cudadiag::compare {

struct ReportPath {
  std::string path;
  bool found = false;  // found in a directory or by a pattern (not named one by one)
};

// In the order given: a file as is ("-" is standard input); a directory as every
// *.json file directly inside it, sorted; a pattern with * ? or [ (quoted, so that
// the shell leaves it alone: no argument-list limit) as its matches, sorted.
// Throws UsageError for a path that does not exist, a directory without .json files,
// or a pattern that matches nothing.
std::vector<ReportPath> expand_report_paths(const std::vector<std::string>& args);

// Reads every report into a digest, `jobs` files at a time (0: one per CPU, at most
// 8). Holds one report's text per job, never all of them. A compare report found in a
// directory or by a pattern is passed over with a note; named on its own it is an
// error. A report found in a directory or by a pattern that cannot be read (truncated,
// malformed, not a report) is passed over with a note naming it and why, unless
// `strict`; one named on its own is always an error. When several files are fatal, the
// error names the first of them in order.
ReportSet load_report_set(const std::vector<ReportPath>& paths, unsigned jobs, bool strict = false);

}  // namespace cudadiag::compare

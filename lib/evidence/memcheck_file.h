#pragma once
// memcheck's XML file (compute-sanitizer --xml), read and parsed in one place for repro's
// sanitizer profile and run's sanitizer rung.
#include <optional>
#include <string>

#include "sanitizer/memcheck.h"

namespace cudadiag::evidence {

struct MemcheckFile {
  std::optional<sanitizer::MemcheckReport> report;  // none: `missing` or `unreadable` says why
  bool missing = false;     // no file to read: the tool wrote none (it did not start, or was killed)
  std::string unreadable;   // the parser's reason when the file is not memcheck XML
};

MemcheckFile read_memcheck_file(const std::string& xml_path);

// Why there is no report, as both commands say it: "compute-sanitizer wrote no XML
// (PATH)" or "PATH: unreadable XML: REASON"; "" when there is one.
std::string problem_text(const MemcheckFile& f, const std::string& xml_path);

}  // namespace cudadiag::evidence

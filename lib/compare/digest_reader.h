#pragma once
// Reading one report into its digest: the only place compare reads a report's text.
// The text is skimmed once (json_skim.h); the top-level sections compare needs are
// parsed whole, each result is read field by field, everything else is stepped over.
// Every problem is an InputError (exit 2) naming the file and the line and column or
// JSON path: malformed JSON, a missing section, another major schema version, a
// field of the wrong type, an unknown outcome, a result that contradicts itself.
#include <string>
#include <string_view>

#include "compare/digest.h"

namespace cudadiag::compare {

ReportDigest read_digest(std::string_view text, const std::string& file, DigestTables& tables);

// Reads the file ("-" is standard input) and calls read_digest.
ReportDigest read_digest_file(const std::string& path, DigestTables& tables);
// The same, reading the text into `buffer` (reused from file to file).
ReportDigest read_digest_file(const std::string& path, DigestTables& tables, std::string& buffer);

}  // namespace cudadiag::compare

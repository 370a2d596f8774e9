#pragma once
// Declarative suites (repro/*.json): which catalog cases (or kernel families with
// parameters) run under which profiles, with the outcome expected on a healthy host.
// A suite names cases and parameters only, never commands. Everything is validated
// before anything runs: a malformed suite throws cudadiag::InputError naming the file
// and the JSON path ("/cases/3/params/heads").
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cases/catalog.h"
#include "profiles/profile.h"
#include "report/report.h"

namespace cudadiag::suite {

using json = report::json;

struct SuiteCase {
  cases::CaseDef def;                  // catalog entry with the suite's overrides applied
  std::vector<profiles::Profile> profiles;  // the profiles it runs under, parsed
  int repeat = 1;
  std::string json_path;               // "/cases/3", for messages
  bool from_catalog = true;            // false: a kernel family with explicit parameters
};

struct Suite {
  std::string name;
  std::string file;                    // path, or "embedded:<name>"
  std::string description;
  int version = 1;
  std::vector<profiles::Profile> default_profiles{profiles::parse_profile("default")};
  int default_repeat = 1;
  int default_deadline_ms = 0;         // 0: each case's own / the runner's default
  std::vector<SuiteCase> cases;
};

// Parses and validates a suite document. `file` is used in error messages.
Suite parse_suite(std::string_view text, const std::string& file);

// "default" (an embedded suite name), a path to a JSON file, or "-" for standard input
// (named "<stdin>" in messages). Unknown names that are not files → UsageError listing
// the embedded suites.
Suite load_suite(const std::string& name_or_file);

// Suites compiled into the binary from repro/*.json (name = file stem).
std::vector<std::string> embedded_suite_names();
std::optional<std::string_view> embedded_suite_text(const std::string& name);

// Keeps the cases whose id matches the glob (fnmatch; '*' and '?' and [..]).
// Throws UsageError when nothing matches.
void filter_cases(Suite& s, const std::string& glob);

// {name, file, description, version, cases:[ids], profiles:[...]} for report.extra["suite"].
json suite_json(const Suite& s);

}  // namespace cudadiag::suite

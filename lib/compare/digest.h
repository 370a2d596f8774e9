#pragma once
// What compare keeps of one report: who wrote it, its environment facts, and for each
// result the few fields a comparison reads. Launch logs, buffers, child excerpts and
// the rest are never held, and every string that reports share is stored once, so
// ten thousand reports fit in memory together.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compare/env_fields.h"
#include "compare/string_pool.h"
#include "report/redaction_mode.h"
#include "report/vocabulary.h"

namespace cudadiag::compare {

// How compare reads an outcome; decided in one place, read_outcome (digest_reader.cpp).
enum class OutcomeClass : std::uint8_t {
  ok,               // ran and passed
  failure,          // went wrong on the machine: mismatch, cuda_error, timeout, crashed, ...
  skipped,          // did not run
  decided_on_host,  // decided before the GPU: invalid_config, host_valid, host_invalid
};

struct ResultDigest {
  std::size_t index = 0;  // position in the report's results[]
  Text case_id = nullptr;
  Text params = nullptr;   // canonical text (canonical_params)
  Text profile = nullptr;
  Text device = nullptr;   // "gpu<N>": N-th GPU the report ran on; "host"; "gpu?" (unknown UUID)
  bool host_only = false;  // ran on the host, no GPU (device "host")
  Text outcome = nullptr;
  OutcomeClass outcome_class = OutcomeClass::ok;
  std::optional<bool> expectation_met;
  Text expected = nullptr;  // the expectation expression ("ok|mismatch"); nullptr or "" when none
  std::optional<int> error_code;
  Text error_name = nullptr;
  // Repeat statistics, when the result carries them; a report without them says nothing
  // about its runs (unknown, never zero).
  std::optional<int> repeat_runs;  // repeats.runs
  int repeat_failures = 0;         // repeats.failures (meaningful only with repeat_runs)
  // repeats.seconds: wall time of the runs inside the child, process start and
  // preparation excluded (schema 1.1); what timing notes compare.
  std::optional<double> repeat_seconds;
  double duration_ms = 0.0;        // the whole result, process start included: never compared
  // The first readable fault site (report/fault_site.h) as "exception in kernel at
  // file:line"; nullptr when the result has none.
  Text site = nullptr;
};

// How a redacted report's tokens were made: the mode and, keyed, the key's id ("?" when
// the report names none). Ordered so that reports group by scheme.
struct TokenScheme {
  report::RedactionMode mode = report::RedactionMode::unkeyed;
  std::string key_id;
  auto operator<=>(const TokenScheme&) const = default;
};

struct ReportDigest {
  std::string file;   // as given (or found in a directory)
  std::string label;  // short unique host label (label_digests)
  std::vector<std::string> notes;
  Text hostname = nullptr;
  // How its identifying values were redacted; nullopt: not redacted. Tokens of two
  // reports compare only under one key.
  std::optional<TokenScheme> redaction;
  Text schema_version = nullptr;
  Text command = nullptr;  // invocation.command, as written
  std::optional<report::Command> command_kind;  // the same, when it names a cudadiag command
  Text verdict = nullptr;  // the report's own verdict.status
  Text driver = nullptr;   // for the hosts table
  Text gpu_model = nullptr;
  bool gpu_ran = true;     // gpu.ran
  Text gpu_reason = nullptr;
  // Device indices the results ran on, ascending; device position N is the N-th of them.
  // Without GPU results: every device of the report.
  std::vector<std::size_t> devices_used;
  std::vector<EnvFact> environment;  // by row id, ascending
  std::vector<ResultDigest> results;
};

// Tables shared by every digest of one comparison (thread-safe).
struct DigestTables {
  StringPool strings;
  EnvRowTable env_rows;
  // Raw params text as written -> canonical text: identical reports parse each once.
  struct ViewHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::mutex params_mu;
  std::unordered_map<std::string, Text, ViewHash, std::equal_to<>> params_canonical;
};

// The reports of one comparison. The tables own every Text the digests point to.
struct ReportSet {
  std::shared_ptr<DigestTables> tables = std::make_shared<DigestTables>();
  std::vector<ReportDigest> reports;
  std::vector<std::string> notes;  // about the set itself, e.g. files passed over
};

// Short unique labels for reports: the hostnames when they are all set and differ,
// otherwise the file names (with a position suffix when those clash too).
std::vector<std::string> unique_labels(const std::vector<std::string>& files,
                                       const std::vector<std::string>& hostnames);

// Labels every digest with unique_labels.
void label_digests(std::vector<ReportDigest>& reports);

}  // namespace cudadiag::compare

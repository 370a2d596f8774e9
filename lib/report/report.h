#pragma once
// The report: one JSON document per run, diffable across hosts.
//
// Stable keys (do not rename; add new ones instead):
//   schema_version, tool, invocation, host, driver, devices, environment,
//   gpu, results, summary, verdict; redaction when --redact was given.
// The JSON Schema in lib/report/report.schema.json describes every key written here.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiles/allocator.h"
#include "report/fault_site.h"
#include "report/vocabulary.h"

namespace cudadiag::report {

using json = nlohmann::ordered_json;

// Bump minor for added keys, major for removed/renamed keys or changed meaning.
inline constexpr const char* kSchemaVersion = "1.1.0";

// A parsed schema_version ("MAJOR.MINOR.PATCH", optional -pre/+build suffixes ignored).
struct SemVer {
  int major = 0;
  int minor = 0;
  int patch = 0;
};
// nullopt when `text` is not a semantic version.
std::optional<SemVer> parse_semver(const std::string& text);

// A CUDA error as it surfaced in a child, enriched from the taxonomy.
struct ErrorInfo {
  int code = 0;
  std::string name;         // cudaErrorIllegalAddress / CUDA_ERROR_ILLEGAL_ADDRESS
  std::string source;       // "runtime" or "driver"
  std::string error_class;  // taxonomy class: memory_fault, misaligned, device_assert, ...
  bool sticky = false;
  std::string surfaced_at;  // launch | synchronize | memcpy | malloc | free | encode | ...
  std::string api_call;     // the exact API call, e.g. "cudaDeviceSynchronize"
  std::string meaning;      // one line from the taxonomy
  std::string next_step;    // one line from the taxonomy
  std::string message;      // cudaGetErrorString / extra context
  std::string location;     // file:line in cudadiag's source where the call was checked
  std::string last_kernel;  // last kernel launched before the error (from the launch log)
};

// Bounded excerpt of one captured stream of a child.
struct StreamExcerpt {
  std::string text;             // head + marker + tail when truncated
  unsigned long long total_bytes = 0;
  unsigned long long dropped_bytes = 0;
};

// How the child process ended (lib/runner decodes it).
struct ChildInfo {
  int pid = 0;
  std::string ending;  // result | exit | signal | timeout | no_result | spawn_failed
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string signal_name;  // SIGSEGV, SIGABRT, ...
  bool killed_after_grace = false;
  StreamExcerpt stdout_excerpt;
  StreamExcerpt stderr_excerpt;
  // Descendants still alive when the child ended (moved to a group or session of their
  // own, or outliving it in its group): killed and reaped at the end of the run.
  struct Stray {
    int pid = 0;
    std::string command;  // its command name
    std::string note;     // "left the process group and session; killed at the end of the run"
  };
  std::vector<Stray> strays;
  std::uint64_t strays_unnamed = 0;  // more of them than are named
};

// The buffer whose fenced allocation made a fault surface: found by bisection (repro,
// fault) or from the interposer's allocation table (run).
struct FaultingBuffer {
  std::string name;
  std::optional<std::uint64_t> bytes;
  std::string direction;          // end_overrun | start_underrun | unknown (faults on both sides)
  std::optional<int> extra_runs;  // bisection: the probes it made
};

// Repeats of one case inside one child (or across children).
struct RepeatStats {
  int runs = 0;
  int failures = 0;
  double failure_rate = 0.0;
  double ci_low = 0.0;   // 95% Wilson interval of the failure rate
  double ci_high = 0.0;
  std::map<std::string, int> histogram;  // outcome -> count
  // Wall time of the runs inside the child (process start, preparation and host
  // cross-checks excluded) and the verified runs per second it gives; none when untimed.
  std::optional<double> seconds;
  std::optional<double> runs_per_second;
};

struct Result {
  std::string case_id;
  std::string kernel;     // index_select | fault | attention | tma | ...
  json params = json::object();
  std::string profile = "default";  // canonical profile name (profiles::Profile::name)
  std::optional<profiles::Allocator> allocator;  // none for host-only cases
  std::string device;     // device UUID, or "host" for host-only cases
  int device_index = -1;
  Outcome outcome = Outcome::no_result;
  std::string expected;   // expectation expression; "" when none
  std::optional<bool> expectation_met;
  std::string reason;     // short human explanation (invalid_config reason, skip reason, ...)
  std::optional<ErrorInfo> error;
  double duration_ms = 0.0;
  std::optional<RepeatStats> repeats;
  std::optional<ChildInfo> child;
  json launch_log = json::array();     // tail of the launch log: kernel, grid, block, smem, buffers
  json buffers = json::array();        // named buffers with address ranges and allocator
  std::optional<FaultingBuffer> faulting_buffer;
  // The fault sites GPU core dumps of this run proved (report/fault_site.h), one per dump,
  // first evidence of the result; empty when no dump was written or dumps were not armed.
  std::vector<FaultSite> fault_sites;
  json xid = json::array();            // kernel-log Xid lines attributed to this child
  json sanitizer = nullptr;            // parsed compute-sanitizer findings
  json details = json::object();       // kernel-specific facts (mismatch count, first bad element, ...)
};

// What the checks behind a verdict could have seen and what they could not (`run`):
// the directions guarded, how many allocations were fenced, one line per item.
struct VerdictCoverage {
  std::vector<std::string> directions;        // "past_end", "before_start"
  std::optional<std::uint64_t> allocations;   // of the fenced run that fenced the fewest
  std::optional<std::uint64_t> fenced;
  std::vector<std::string> seen;
  std::vector<std::string> unseen;
};

struct Verdict {
  VerdictStatus status = VerdictStatus::incomplete;  // one of statuses_of(invocation.command)
  std::vector<std::string> reasons;                  // human-readable, one per finding
  std::optional<VerdictCoverage> coverage;
};

// What --redact replaced by stable hashes ("redacted:xxxxxxxx"): the kinds of value,
// e.g. "hostname", "GPU UUIDs", "--env values (2)". Absent when the report is not redacted.
struct Redaction {
  bool applied = true;
  std::vector<std::string> covers;
};

struct Report {
  std::string schema_version = kSchemaVersion;
  json tool = json::object();
  json invocation = json::object();
  json host = json::object();
  json driver = json::object();
  json devices = json::array();
  json environment = json::object();
  json gpu = json::object();  // {"ran": bool, "reason": "..."}: whether the GPU part could run
  std::vector<Result> results;
  json summary = json::object();
  Verdict verdict;
  std::optional<Redaction> redaction;
  json extra = json::object();  // command-specific sections (e.g. "comparison", "tma"); merged at top level
};

// JSON text of any document cudadiag writes: the one way JSON is dumped. Strings from
// the outside world (environment values, file names, process names in Xid lines,
// sanitizer text, child output) need not be UTF-8; an invalid sequence becomes U+FFFD
// instead of an exception, so one bad byte never costs the report.
std::string dump_json(const json& j, int indent = -1);

json to_json(const ErrorInfo& e);
json to_json(const ChildInfo& c);
json to_json(const FaultingBuffer& f);
json to_json(const RepeatStats& r);
json to_json(const Result& r);
json to_json(const Report& r);

// Read a document back into the model. Every wrong type, missing required member or
// number out of range throws InputError naming `source` and the JSON pointer
// ("a.json: /results/3/duration_ms: expected a number, got string \"slow\"").
ErrorInfo error_from_json(const json& j, const std::string& source = "error");
Result result_from_json(const json& j, const std::string& source = "result");
Report report_from_json(const json& j, const std::string& source = "report");

// Fills tool (build info) and invocation (argv, start time) of a new report.
Report new_report(const std::vector<std::string>& argv, const std::string& command);
// Stamps invocation.finished_at/duration_ms and fills summary counts from results.
void finish_report(Report& r);

// ISO-8601 UTC timestamp with milliseconds.
std::string now_iso8601();

// Allowlisted environment: CUDA_*, PYTORCH_*, TORCH_*, NCCL_*, and a few named ones.
json capture_environment(char** envp);
bool is_allowlisted_env(const std::string& name);

}  // namespace cudadiag::report

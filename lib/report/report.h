#pragma once
// The report: one JSON document per run, diffable across hosts.
//
// Stable keys (do not rename; add new ones instead):
//   schema_version, tool, invocation, host, driver, devices, environment,
//   gpu, results, summary, verdict; redaction when --redact was given.
// The JSON Schema in lib/report/report.schema.json describes every key written here.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases/family.h"
#include "profiles/allocator.h"
#include "report/fault_site.h"
#include "report/host_sections.h"
#include "report/redaction_mode.h"
#include "report/value.h"
#include "report/vocabulary.h"
#include "sanitizer/memcheck.h"
#include "taxonomy/taxonomy.h"
#include "util/choices.h"

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
  std::optional<taxonomy::ErrorSource> source;  // none: not said (annotate_error infers it)
  taxonomy::ErrorClass error_class = taxonomy::ErrorClass::unknown;
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
  ChildEnding ending = ChildEnding::spawn_failed;
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

// Which way a buffer's accesses ran out: past its end, before its start, or unknown
// (faults with the guard on either side: both ends, or a use after free).
enum class BufferDirection : std::uint8_t { end_overrun, start_underrun, unknown };
inline constexpr ChoiceTable<BufferDirection, 3> kBufferDirections{{
    {BufferDirection::end_overrun, "end_overrun"},
    {BufferDirection::start_underrun, "start_underrun"},
    {BufferDirection::unknown, "unknown"},
}};

// The buffer whose fenced allocation made a fault surface: found by bisection (repro,
// fault) or from the interposer's allocation table (run).
struct FaultingBuffer {
  std::string name;
  std::optional<std::uint64_t> bytes;
  BufferDirection direction = BufferDirection::unknown;
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

// Where a result ran: a GPU named by its UUID, the host alone (host-only cases), or not
// said. JSON: the UUID, "host", or "".
struct Device {
  enum class Kind : std::uint8_t { unset, host, gpu };
  Kind kind = Kind::unset;
  std::string uuid;  // kind gpu

  static Device host_only() { return Device{Kind::host, {}}; }
  static Device gpu(std::string uuid) { return Device{Kind::gpu, std::move(uuid)}; }
  bool is_host() const { return kind == Kind::host; }
  bool is_gpu() const { return kind == Kind::gpu; }
  bool operator==(const Device& o) const { return kind == o.kind && uuid == o.uuid; }
};
// The JSON edge: "host" is the host, "" unset, anything else a GPU's UUID.
Device parse_device(const std::string& text);
std::string to_string(const Device& d);

// One kernel launch of the launch log. The child harness names the buffers a launch
// was given; `run` names the launch API the interposer saw.
struct LaunchRecord {
  std::uint64_t seq = 0;
  std::string kernel;
  std::array<std::uint64_t, 3> grid{};
  std::array<std::uint64_t, 3> block{};
  std::uint64_t dynamic_smem = 0;
  std::optional<std::vector<std::string>> buffers;
  std::optional<std::string> api;
};

// [begin, end) of device memory.
struct AddressRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};
// "0x<begin>-0x<end>" (the report's form); nullopt for anything else.
std::optional<AddressRange> parse_address_range(std::string_view text);
std::string to_string(const AddressRange& r);

// A named device buffer of a case.
struct BufferRecord {
  std::string name;
  std::uint64_t bytes = 0;
  std::optional<AddressRange> range;
  std::optional<profiles::Allocator> allocator;
  std::optional<bool> freed;
};

// Who an Xid number usually points at (host/xid.h's table).
enum class XidPointsTo : std::uint8_t { application, hardware, driver, unknown };
inline constexpr ChoiceTable<XidPointsTo, 4> kXidPointsTo{{
    {XidPointsTo::application, "application"},
    {XidPointsTo::hardware, "hardware"},
    {XidPointsTo::driver, "driver"},
    {XidPointsTo::unknown, "unknown"},
}};

// A kernel-log Xid line tied to the child, with what its number usually means.
struct XidLine {
  std::optional<std::uint64_t> timestamp_us;  // CLOCK_MONOTONIC, when the line has one
  std::string pci;
  int xid = 0;
  std::optional<int> pid;
  std::optional<std::string> process;
  std::string message;
  std::string meaning;
  XidPointsTo points_to = XidPointsTo::unknown;
};

// What compute-sanitizer found: its parsed report, or why there is none.
struct SanitizerFindings {
  std::string tool = "memcheck";
  std::optional<sanitizer::MemcheckReport> memcheck;
  std::string error;  // evidence::problem_text(): why memcheck is none
};

struct Result {
  std::string case_id;
  cases::Family kernel = cases::Family::fault;
  Fields params;
  std::string profile = "default";  // canonical profile name (profiles::Profile::name)
  std::optional<profiles::Allocator> allocator;  // none for host-only cases
  Device device;
  int device_index = -1;
  Outcome outcome = Outcome::no_result;
  std::string expected;   // expectation expression; "" when none
  std::optional<bool> expectation_met;
  std::string reason;     // short human explanation (invalid_config reason, skip reason, ...)
  std::optional<ErrorInfo> error;
  double duration_ms = 0.0;
  std::optional<RepeatStats> repeats;
  std::optional<ChildInfo> child;
  std::vector<LaunchRecord> launch_log;  // tail of the launch log
  std::vector<BufferRecord> buffers;     // named buffers with address ranges and allocator
  std::optional<FaultingBuffer> faulting_buffer;
  // The fault sites GPU core dumps of this run proved (report/fault_site.h), one per dump,
  // first evidence of the result; empty when no dump was written or dumps were not armed.
  std::vector<FaultSite> fault_sites;
  std::vector<XidLine> xid;              // kernel-log Xid lines attributed to this child
  std::optional<SanitizerFindings> sanitizer;
  Fields details;                        // kernel-specific facts (mismatch count, first bad element, ...)
};

// The counts finish_report takes over the results.
struct Summary {
  std::uint64_t total = 0;
  std::vector<std::pair<Outcome, int>> by_outcome;  // in the order the outcomes first appear
  int expectations_met = 0;
  int expectations_unmet = 0;
  int not_judged = 0;
};

// What the checks behind a verdict could have seen and what they could not (`run`):
// the directions guarded, how many allocations were fenced, one line per item.
// An end of the allocations the fence guarded (VerdictCoverage.directions).
enum class GuardedEnd : std::uint8_t { past_end, before_start };
inline constexpr ChoiceTable<GuardedEnd, 2> kGuardedEnds{{
    {GuardedEnd::past_end, "past_end"},
    {GuardedEnd::before_start, "before_start"},
}};

struct VerdictCoverage {
  std::vector<GuardedEnd> directions;
  std::optional<std::uint64_t> allocations;   // of the fenced run that fenced the fewest
  std::optional<std::uint64_t> fenced;
  // How far past the end (before the start) a fenced buffer is watched: its own size up to
  // this many bytes, or one granule of this many under CUDADIAG_GUARD=granule.
  std::optional<std::uint64_t> guard_reach_bytes;
  std::optional<std::string> guard;            // "scaled" or "granule"
  std::optional<std::uint64_t> guards_cut;     // buffers watched less far: the bound on all guards was reached
  std::vector<std::string> seen;
  std::vector<std::string> unseen;
};

struct Verdict {
  VerdictStatus status = VerdictStatus::incomplete;  // one of statuses_of(invocation.command)
  std::vector<std::string> reasons;                  // human-readable, one per finding
  std::optional<VerdictCoverage> coverage{};
};

// What --redact replaced by tokens ("redacted:" and 16 hex digits): the kinds of value,
// e.g. "hostname", "GPU UUIDs", "--env values (2)". Absent when the report is not redacted.
struct Redaction {
  bool applied = true;
  std::vector<std::string> covers;
  // How the tokens were made (report/redaction_mode.h); keyed tokens name their key by
  // key_id.
  RedactionMode mode = RedactionMode::unkeyed;
  std::string key_id;
};

// The cudadiag build that wrote the report.
struct Tool {
  std::string name = "cudadiag";
  std::string version;
  std::string git_revision;
  std::string cuda_toolkit;
  std::vector<std::string> architectures;  // sm_90, compute_90, ...
};

// How cudadiag was called, and when.
struct Invocation {
  std::string command;  // repro, run, env, ...
  std::vector<std::string> argv;
  std::string started_at;                 // ISO-8601 UTC (now_iso8601)
  std::optional<std::string> finished_at;  // finish_report
  std::optional<double> duration_ms;
  std::optional<bool> interrupted;         // evidence::record_interruption; none: the command does not say
};

// Whether the GPU part could run: {"ran": bool, "reason": "..."}.
struct GpuStatus {
  bool ran = false;
  std::optional<std::string> reason;  // none: the command gave no reason (one that ran, mostly)
};

struct Report {
  std::string schema_version = kSchemaVersion;
  Tool tool;
  Invocation invocation;
  HostInfo host;
  DriverInfo driver;
  std::vector<DeviceInfo> devices;
  Environment environment;
  GpuStatus gpu{false, "not attempted"};
  std::vector<Result> results;
  std::optional<Summary> summary;  // none: {} (a report not finished by finish_report)
  Verdict verdict;
  std::optional<Redaction> redaction;
  // Command-specific sections, merged at the top level: suite (repro), run, comparison
  // (compare), tma, sweep (attention). Each is named members (report/value.h).
  Fields extra;
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
json to_json(const GpuStatus& g);
json to_json(const Invocation& i);
json to_json(const Tool& t);
json to_json(const LaunchRecord& l);
json to_json(const BufferRecord& b);
json to_json(const XidLine& x);
json to_json(const SanitizerFindings& s);
json to_json(const Result& r);
json to_json(const Summary& s);
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
Environment capture_environment(char** envp);
bool is_allowlisted_env(const std::string& name);

}  // namespace cudadiag::report

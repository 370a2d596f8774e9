#pragma once
// The environment facts compared across hosts, as a table of (label, JSON pointers).
// Key names inside host/driver/devices come from lib/host; each field lists the
// pointers it may live at (first one present wins), so renaming a key there means
// adding a pointer here. Missing keys are tolerated: the cell shows as absent.
//
// Deliberately absent: fields that differ on every pair of hosts and say nothing
// about a fault (hostname, serials, UUIDs, PCI bus ids, timestamps, durations, pids,
// temperatures, clocks, power, free memory).
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compare/string_pool.h"
#include "report/report.h"

namespace cudadiag::compare {

// The JSON types a field may hold (null always means "not recorded"); any other type is
// refused when the report is read (check_head_types), never shown as its dump.
enum class FieldKind {
  text,     // a string
  scalar,   // a string, a number or a boolean (versions and modes some producers write as numbers)
  counter,  // a number, or an object whose leaves are numbers, booleans or null (health counters)
};

// What compare itself takes from a field besides its row: the hosts table's driver and
// GPU model.
enum class FieldRole : std::uint8_t { row_only, driver_version, gpu_model };

struct EnvField {
  std::string label;              // e.g. "driver version", "vbios"
  std::string category;           // driver | cuda | gpu | health | mode | os | tool | suite
  int weight = 0;                 // suspect rank: how likely a difference explains a fault
  bool per_device = false;        // pointers are relative to devices[i]
  bool health_counter = false;    // a count where non-zero on the failing host ranks high
  std::vector<std::string> pointers;
  FieldKind kind = FieldKind::text;
  FieldRole role = FieldRole::row_only;
};

// The table itself (host, driver, tool, suite and per-device fields).
const std::vector<EnvField>& env_fields();

// Weight given to a difference in a captured environment variable.
inline constexpr int kEnvVarWeight = 45;

// What a row of the environment table is: a field, a field of the N-th GPU, or a variable.
struct EnvRowInfo {
  std::string field;     // "driver version", "gpu0 VBIOS", "env CUDA_LAUNCH_BLOCKING"
  std::string category;
  std::string device;    // "gpu<N>" for per-device rows, "" otherwise
  int weight = 0;
  bool health_counter = false;
};

// A row as the reports of a comparison found it.
struct EnvRowSpec : EnvRowInfo {
  bool variable = false;  // an environment variable: a report without it has it "(unset)"
  // Table order: report fields, the device count, per device, variables.
  int section = 0;
  std::size_t device_position = 0;
  std::size_t field_order = 0;
};

// The rows seen across all reports of a comparison; thread-safe.
class EnvRowTable {
 public:
  std::uint32_t id(const EnvRowSpec& spec);  // one id per field name
  const EnvRowSpec& spec(std::uint32_t id) const;
  std::vector<std::uint32_t> ordered() const;  // every id, in table order

 private:
  mutable std::mutex mu_;
  std::deque<EnvRowSpec> specs_;
  std::unordered_map<std::string, std::uint32_t> by_field_;
};

// One environment fact of one report.
struct EnvFact {
  std::uint32_t row = 0;
  Text value = nullptr;
  double counter_total = 0.0;  // health counters: the sum of the counts
};

// The facts of one report: `head` holds its top-level sections (results may be absent);
// `devices_used` lists the devices[] indices whose facts become gpu0, gpu1, ...
// Sorted by row id.
std::vector<EnvFact> environment_facts(const report::json& head, const std::vector<std::size_t>& devices_used,
                                       EnvRowTable& rows, StringPool& strings);

// A row with every report's value.
struct EnvRow : EnvRowInfo {
  std::vector<Text> values;           // per report; nullptr: not recorded
  std::vector<double> counter_totals;  // per report, health counters only
  bool differs = false;  // at least two recorded values differ
};

struct ReportDigest;

// Every field recorded by at least one report, in table order.
// Variables a report does not set read "(unset)" there.
std::vector<EnvRow> environment_rows(const std::vector<ReportDigest>& reports, const EnvRowTable& table,
                                     StringPool& strings);

// Value at the first pointer that exists and is not null, as text (strings unquoted).
std::optional<std::string> lookup_text(const report::json& doc, const std::vector<std::string>& pointers,
                                       const report::json** found = nullptr);

// Sum of the numeric leaves of a value (a count, or an object of counts); booleans and
// strings count as 0.
double numeric_total(const report::json& value);

}  // namespace cudadiag::compare

#pragma once
// The environment facts compared across hosts, as a table of (label, JSON pointers).
// Key names inside host/driver/devices come from lib/host; each field lists the
// pointers it may live at (first one present wins), so renaming a key there means
// adding a pointer here. Missing keys are tolerated: the cell shows as absent.
//
// Deliberately absent: fields that differ on every pair of hosts and say nothing
// about a fault (hostname, serials, UUIDs, PCI bus ids, timestamps, durations, pids,
// temperatures, clocks, power, free memory).
#include <optional>
#include <string>
#include <vector>

#include "compare/load.h"

namespace cudadiag::compare {

struct EnvField {
  std::string label;              // e.g. "driver version", "vbios"
  std::string category;           // driver | cuda | gpu | health | mode | os | tool | suite
  int weight = 0;                 // suspect rank: how likely a difference explains a fault
  bool per_device = false;        // pointers are relative to devices[i]
  bool health_counter = false;    // a count where non-zero on the failing host ranks high
  std::vector<std::string> pointers;
};

// The table itself (host, driver, tool, suite and per-device fields).
const std::vector<EnvField>& env_fields();

// Weight given to a difference in a captured environment variable.
inline constexpr int kEnvVarWeight = 45;

struct EnvRow {
  std::string field;     // "driver version", "gpu0 vbios", "env CUDA_LAUNCH_BLOCKING"
  std::string category;
  std::string device;    // "gpu<N>" for per-device rows, "" otherwise
  int weight = 0;
  bool health_counter = false;
  std::vector<std::optional<std::string>> values;  // per report; nullopt: not recorded
  std::vector<double> counter_totals;              // per report, health counters only
  bool differs = false;  // at least two recorded values differ
};

// Every field recorded by at least one report, in table order.
std::vector<EnvRow> environment_rows(const std::vector<LoadedReport>& reports);

// Value at the first pointer that exists and is not null, as text (strings unquoted).
std::optional<std::string> lookup_text(const report::json& doc, const std::vector<std::string>& pointers,
                                       const report::json** found = nullptr);

// Sum of the numeric leaves of a value (a count, or an object of counts); booleans and
// strings count as 0.
double numeric_total(const report::json& value);

}  // namespace cudadiag::compare

#pragma once
// A table of descriptors, valid and invalid, covering every rule of the validator. The
// unit tests check the validator against it; `cudadiag tma --table` runs every row
// through the validator and the real driver, so a disagreement shows on the device.
#include <optional>
#include <string>
#include <vector>

#include "tma/descriptor.h"

namespace cudadiag::tma {

struct TableRow {
  std::string name;
  Descriptor descriptor;               // address is an offset from a 256-byte aligned buffer
  std::vector<std::string> errors;     // expected error rule ids (exactly these)
  std::vector<std::string> warnings;   // warning rule ids expected among the findings
  std::string note;                    // e.g. why the driver may differ on some devices
  bool needs_sm100 = false;            // a packed 16U4/16U6 type: the target decides an
                                       // error or a warning more; see expected_*()
};

// The error rule ids a row expects for a target compute capability (major*10+minor;
// unset = unknown): a row that needs sm_100 gains tma.data_type.packed_requires_sm100
// on an older target.
std::vector<std::string> expected_errors(const TableRow& row, std::optional<int> target_cc);
// The warning rule ids a row expects among the findings for that target.
std::vector<std::string> expected_warnings(const TableRow& row, std::optional<int> target_cc);

const std::vector<TableRow>& rule_table();

// Every error rule id the validator can emit (the table covers each one).
const std::vector<std::string>& error_rule_ids();
// Every warning rule id the validator can emit.
const std::vector<std::string>& warning_rule_ids();

}  // namespace cudadiag::tma

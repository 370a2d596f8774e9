#pragma once
// A table of descriptors, valid and invalid, covering every rule of the validator. The
// unit tests check the validator against it; `cudadiag tma --table` runs every row
// through the validator and the real driver, so a disagreement shows on the device.
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
};

const std::vector<TableRow>& rule_table();

// Every error rule id the validator can emit (the table covers each one).
const std::vector<std::string>& error_rule_ids();
// Every warning rule id the validator can emit.
const std::vector<std::string>& warning_rule_ids();

}  // namespace cudadiag::tma

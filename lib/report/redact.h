#pragma once
// --redact: replace identifying values (hostnames, serials, UUIDs, PCI bus ids, the
// values given with run's --env) with stable hashes, so two redacted reports of the same
// host still pair up.
#include <string>
#include <utility>
#include <vector>

#include "report/report.h"

namespace cudadiag::report {

// Values the report cannot name by itself that --redact must scrub too.
struct RedactionInputs {
  // run's --env NAME=VALUE assignments: a VALUE may be a secret (a token, a password).
  std::vector<std::pair<std::string, std::string>> env;
};

// Stable short hash of an identifying value, e.g. "redacted:3f9a1c2b".
std::string redact_value(const std::string& value);

// Redacts a document in place and says what it covered:
//  - host.hostname, devices[].uuid/serial/pci_bus_id, results[].device (by name);
//  - anywhere, in any string and object key: GPU/MIG UUIDs and PCI ids (by form), the
//    values of those named fields, the hostname and its first label (the short name,
//    `hostname -s`) in any letter case as whole words, and each --env VALUE: as
//    "NAME=VALUE" at any length, alone when it has 4 or more characters (shorter ones
//    would scrub ordinary words and numbers), and as the environment section's value of NAME.
Redaction redact(json& document, const RedactionInputs& inputs = {});

// The same on the report, which records what was covered in r.redaction.
void redact(Report& r, const RedactionInputs& inputs = {});

}  // namespace cudadiag::report

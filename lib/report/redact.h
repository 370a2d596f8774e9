#pragma once
// --redact: replace identifying fields (hostname, serials, UUIDs, PCI bus ids) with
// stable hashes, so two redacted reports of the same host still pair up.
#include "report/report.h"

namespace cudadiag::report {

// Stable short hash of an identifying value, e.g. "redacted:3f9a1c2b".
std::string redact_value(const std::string& value);

// Redacts in place: host.hostname, devices[].uuid/serial/pci_bus_id, results[].device,
// and any string anywhere in the document that looks like a GPU UUID.
void redact(json& document);

}  // namespace cudadiag::report

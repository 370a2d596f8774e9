#pragma once
// Pairing results across reports: the same case, with the same parameters, under the
// same profile, on the same device position. Results that find no partner in some
// report are kept and listed, never dropped silently.
#include <optional>
#include <string>
#include <vector>

#include "compare/load.h"

namespace cudadiag::compare {

struct PairKey {
  std::string case_id;
  std::string params;  // canonical dump: keys sorted, no whitespace
  std::string profile;
  std::string device;  // "gpu<N>" (device position), "host" (host-only), "gpu?" (unknown)
  int occurrence = 1;  // the n-th result with this key in one report (repeated entries)

  std::string id() const;     // unique text form, used to sort and look up
  std::string label() const;  // short human form: case [profile] @device
  bool operator<(const PairKey& o) const { return id() < o.id(); }
};

// Canonical text of a params object: the same parameters in another key order match.
std::string canonical_params(const report::json& params);

// Device position of a result: device_index when set, otherwise the position of the
// result's device UUID in that report's devices[] (by "uuid"), "host" for host-only.
std::string device_position(const report::Result& r, const report::json& devices);

struct PairedCase {
  PairKey key;
  std::vector<const report::Result*> per_report;  // nullptr where the report lacks it
  std::size_t present() const;
};

struct UnpairedResult {
  std::size_t report = 0;             // index of the report that has it
  PairKey key;
  std::vector<std::size_t> missing_in;  // reports without a partner
  std::string hint;                   // e.g. "same case and profile ran with other parameters"
};

struct Pairing {
  std::vector<PairedCase> cases;        // every key, sorted; present() >= 1
  std::vector<UnpairedResult> unpaired;  // per report: results missing in at least one other
};

Pairing pair_results(const std::vector<LoadedReport>& reports);

}  // namespace cudadiag::compare

#pragma once
// Pairing results across reports: the same case, with the same parameters, under the
// same profile, on the same device position. Results that find no partner in some
// report are kept and listed, never dropped silently.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compare/digest.h"
#include "report/report.h"

namespace cudadiag::compare {

struct PairKey {
  std::string case_id;
  std::string params;  // canonical dump: keys sorted, no whitespace
  std::string profile;
  std::string device;  // "gpu<N>" (device position), "host" (host-only), "gpu?" (unknown)
  int occurrence = 1;  // the n-th result with this key in one report (repeated entries)
  bool host_only = false;  // device "host": the label names no device

  std::string id() const;     // unique text form, used to sort and look up
  std::string label() const;  // short human form: case [profile] @device
  bool operator<(const PairKey& o) const { return id() < o.id(); }
};

// Canonical text of a params object: the same parameters in another key order match.
std::string canonical_params(const report::json& params);
// The same for params as written in a report (throws nlohmann's parse_error).
std::string canonical_params_text(std::string_view raw);

// Device index of a result: device_index when set, otherwise the index of the device
// whose "uuid" is the result's device; nullopt for host-only results and unknown UUIDs.
std::optional<std::size_t> device_index_of(std::string_view device, int device_index, const report::json& devices);

// Device position of a result as text: "gpu<index>", "host" for host-only, "gpu?" for
// an unknown UUID.
std::string device_position(const report::Result& r, const report::json& devices);

struct PairedCase {
  PairKey key;
  std::vector<const ResultDigest*> per_report;  // nullptr where the report lacks it
  std::size_t present() const;
};

// A key that some reports lack.
struct UnpairedCase {
  PairKey key;
  std::vector<std::size_t> present_in;  // reports that have it
  std::vector<std::size_t> missing_in;  // reports without a partner
  std::string hint;                     // e.g. "the same case and profile ran there with other parameters"
};

struct Pairing {
  std::vector<PairedCase> cases;          // every key, sorted; present() >= 1
  std::vector<UnpairedCase> unpaired;     // keys missing in at least one report
  std::size_t unpaired_results() const;   // results without a partner everywhere
};

Pairing pair_results(const std::vector<ReportDigest>& reports);

}  // namespace cudadiag::compare

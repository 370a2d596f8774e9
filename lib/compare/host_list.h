#pragma once
// How compare names hosts in sentences: every host when a few reports are compared,
// counts and a few examples for a fleet, so that no line lists hundreds of names.
#include <cstddef>
#include <string>
#include <vector>

namespace cudadiag::compare {

// From this many reports on, text names hosts by group and count (JSON keeps every name).
inline constexpr std::size_t kFleetReports = 4;
// Host names given as examples in one sentence.
inline constexpr std::size_t kExampleHosts = 3;

inline bool fleet_layout(std::size_t reports) { return reports >= kFleetReports; }

// "a, b, c": every name when there are at most `limit`, else "a, b, c and 17 more".
std::string example_names(const std::vector<std::size_t>& idx, const std::vector<std::string>& labels,
                          std::size_t limit = kExampleHosts);

// "1 host" / "250 hosts"
std::string host_count(std::size_t n);

// Joins parts with sep.
std::string join(const std::vector<std::string>& parts, const std::string& sep);

}  // namespace cudadiag::compare

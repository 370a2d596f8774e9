#pragma once
// Seeds of repeat series as users type them: `--seed` (the series' first seed) and
// `--replay` (one run's own seed, as a report prints it). Decimal or 0x-prefixed hex.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "report/report.h"

namespace cudadiag::cases {

// nullopt for anything but a whole non-negative integer that fits in 64 bits.
std::optional<uint64_t> parse_seed(std::string_view text);
// "0x" and 16 hex digits: what a report prints and --replay accepts.
std::string format_seed(uint64_t seed);

// `--seed TEXT` and `--replay TEXT` as typed (empty: not given) -> params "seed" and
// "replay_seed". Throws std::invalid_argument naming the flag and the text.
void add_seed_params(const std::string& seed, const std::string& replay, report::json& params);

}  // namespace cudadiag::cases

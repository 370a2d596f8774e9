#pragma once
// Seeds of repeat series. Every run of a series has its own 64-bit seed, and a family
// draws all of that run's inputs from it, so one run can be replayed from its seed
// alone. Users type seeds as `--seed` (the series' base) and `--replay` (one run's own
// seed, as a report prints it), decimal or 0x-prefixed hex; they are parsed here, once,
// into a SeedRequest that the CaseSpec carries to the child.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::repeat {

struct SeedRequest {
  enum class Kind {
    series,  // run i uses series_seed(value, i)
    replay,  // one run with exactly this seed, cross-checked on the host
  };
  Kind kind = Kind::series;
  std::uint64_t value = 0;
  bool operator==(const SeedRequest&) const = default;
};

// Seed of run `run` of a series started from `base`: distinct runs get distinct,
// unrelated seeds (splitmix64 of the pair), and a run is replayed from its own seed.
std::uint64_t series_seed(std::uint64_t base, std::uint64_t run);

// nullopt for anything but a whole non-negative integer that fits in 64 bits.
std::optional<std::uint64_t> parse_seed(std::string_view text);
// "0x" and 16 hex digits: what a report prints and --replay accepts.
std::string format_seed(std::uint64_t seed);
// "--replay 0x...": the flag that runs this run again.
std::string replay_hint(std::uint64_t seed);

// `--seed TEXT` and `--replay TEXT` as typed (empty: not given). Throws
// std::invalid_argument naming the flag and the text, or both flags when both are given.
std::optional<SeedRequest> seed_request(const std::string& seed, const std::string& replay);

}  // namespace cudadiag::repeat

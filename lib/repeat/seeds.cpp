#include "repeat/seeds.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>

#include "kernels/runtime/counter_rng.h"

namespace cudadiag::repeat {

std::uint64_t series_seed(std::uint64_t base, std::uint64_t run) {
  return rng::mix64(base + 0x9e3779b97f4a7c15ull * (run + 1));
}

std::optional<std::uint64_t> parse_seed(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string format_seed(std::uint64_t seed) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(seed));
  return buf;
}

std::string replay_hint(std::uint64_t seed) { return "--replay " + format_seed(seed); }

std::optional<SeedRequest> seed_request(const std::string& seed, const std::string& replay) {
  if (!seed.empty() && !replay.empty())
    throw std::invalid_argument("--seed and --replay: give one (--replay runs one run with its own seed)");
  const bool is_replay = !replay.empty();
  const std::string& text = is_replay ? replay : seed;
  if (text.empty()) return std::nullopt;
  const auto v = parse_seed(text);
  if (!v)
    throw std::invalid_argument(std::string(is_replay ? "--replay" : "--seed") + ": '" + text +
                                "' is not a seed (decimal or 0x-prefixed hex)");
  return SeedRequest{is_replay ? SeedRequest::Kind::replay : SeedRequest::Kind::series, *v};
}

}  // namespace cudadiag::repeat

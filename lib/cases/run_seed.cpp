#include "cases/run_seed.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace cudadiag::cases {

std::optional<uint64_t> parse_seed(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string format_seed(uint64_t seed) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(seed));
  return buf;
}

void add_seed_params(const std::string& seed, const std::string& replay, report::json& params) {
  const struct {
    const char* flag;
    const std::string& text;
    const char* key;
  } given[] = {{"--seed", seed, "seed"}, {"--replay", replay, "replay_seed"}};
  for (const auto& g : given) {
    if (g.text.empty()) continue;
    const auto v = parse_seed(g.text);
    if (!v) throw std::invalid_argument(std::string(g.flag) + ": '" + g.text + "' is not a seed (decimal or 0x-prefixed hex)");
    params[g.key] = *v;
  }
}

}  // namespace cudadiag::cases

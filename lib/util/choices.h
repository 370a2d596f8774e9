#pragma once
// A named choice: the one table that maps an enum to the words users type, read by the
// JSON (de)serialisers and by the CLI (`IsMember(names(table))`), so the words are
// written once.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag {

template <typename E>
struct Choice {
  E value;
  std::string_view name;
};

template <typename E, size_t N>
using ChoiceTable = std::array<Choice<E>, N>;

template <typename E, size_t N>
constexpr std::optional<E> parse_choice(const ChoiceTable<E, N>& table, std::string_view text) {
  for (const auto& c : table)
    if (c.name == text) return c.value;
  return std::nullopt;
}

template <typename E, size_t N>
constexpr std::string_view choice_name(const ChoiceTable<E, N>& table, E value) {
  for (const auto& c : table)
    if (c.value == value) return c.name;
  return "?";
}

template <typename E, size_t N>
std::vector<std::string> choice_names(const ChoiceTable<E, N>& table) {
  std::vector<std::string> out;
  for (const auto& c : table) out.emplace_back(c.name);
  return out;
}

// "a|b|c", for messages.
template <typename E, size_t N>
std::string choice_list(const ChoiceTable<E, N>& table, std::string_view sep = "|") {
  std::string out;
  for (const auto& c : table) {
    if (!out.empty()) out += sep;
    out += c.name;
  }
  return out;
}

}  // namespace cudadiag

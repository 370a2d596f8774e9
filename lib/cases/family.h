#pragma once
// The kernel families: one enumerator per family, the key that the parent's catalog
// (cases::KernelFamily) and the child's dispatch (apps/cudadiag/child_families.cpp)
// both read. Header-only and dependency-free: the wire protocol carries it too.
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/choices.h"

namespace cudadiag::cases {

enum class Family : std::uint8_t { fault, index_select, attention, tma };

inline constexpr ChoiceTable<Family, 4> kFamilies{{{Family::fault, "fault"},
                                                   {Family::index_select, "index_select"},
                                                   {Family::attention, "attention"},
                                                   {Family::tma, "tma"}}};

constexpr std::string_view to_string(Family f) { return choice_name(kFamilies, f); }
constexpr std::optional<Family> parse_family(std::string_view text) { return parse_choice(kFamilies, text); }

}  // namespace cudadiag::cases

#pragma once
// The kernel families: one enumerator per family, the key that the parent's catalog
// (cases::KernelFamily) and the child's dispatch (apps/cudadiag/child_families.cpp)
// both read. Header-only and dependency-free: the wire protocol carries it too.
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/choices.h"

namespace cudadiag::cases {

// `program`: the user's program under `cudadiag run` (a report's result.kernel), no
// catalog family: suites and the child protocol name the other four only.
enum class Family : std::uint8_t { fault, index_select, attention, tma, program };

inline constexpr ChoiceTable<Family, 4> kFamilies{{{Family::fault, "fault"},
                                                   {Family::index_select, "index_select"},
                                                   {Family::attention, "attention"},
                                                   {Family::tma, "tma"}}};
// Every value of a report's result.kernel.
inline constexpr ChoiceTable<Family, 5> kKernels{{{Family::fault, "fault"},
                                                  {Family::index_select, "index_select"},
                                                  {Family::attention, "attention"},
                                                  {Family::tma, "tma"},
                                                  {Family::program, "program"}}};

constexpr std::string_view to_string(Family f) { return choice_name(kKernels, f); }
// A catalog family (suites, the child protocol).
constexpr std::optional<Family> parse_family(std::string_view text) { return parse_choice(kFamilies, text); }
// A report's result.kernel.
constexpr std::optional<Family> parse_kernel(std::string_view text) { return parse_choice(kKernels, text); }

}  // namespace cudadiag::cases

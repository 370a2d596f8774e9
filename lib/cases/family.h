#pragma once
// The kernel families: the one list (CUDADIAG_FAMILIES) from which the enumerator, its
// name, the parent's registration (lib/cases/catalog.cpp: <name>_family() from
// catalog_<name>.cpp) and the child's dispatch (apps/cudadiag/child_families.cpp:
// make_<name>_run() from child_<name>.cpp) are all generated. A family added here without
// its two functions does not link. Header-only and dependency-free: the wire protocol
// carries it too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/choices.h"

namespace cudadiag::cases {

// X(name): the name is the enumerator, the family's word in suites and reports, and the
// stem of its registration and child functions.
#define CUDADIAG_FAMILIES(X) X(fault) X(index_select) X(attention) X(tma)

// `program` follows the catalog families: the user's program under `cudadiag run` (a
// report's result.kernel), no catalog family: suites and the child protocol name the
// others only.
#define CUDADIAG_FAMILY_ENUMERATOR(name) name,
enum class Family : std::uint8_t { CUDADIAG_FAMILIES(CUDADIAG_FAMILY_ENUMERATOR) program };
#undef CUDADIAG_FAMILY_ENUMERATOR

#define CUDADIAG_FAMILY_COUNT(name) +1
inline constexpr std::size_t kFamilyCount = 0 CUDADIAG_FAMILIES(CUDADIAG_FAMILY_COUNT);
#undef CUDADIAG_FAMILY_COUNT

#define CUDADIAG_FAMILY_CHOICE(name) Choice<Family>{Family::name, #name},
inline constexpr ChoiceTable<Family, kFamilyCount> kFamilies{{CUDADIAG_FAMILIES(CUDADIAG_FAMILY_CHOICE)}};
// Every value of a report's result.kernel.
inline constexpr ChoiceTable<Family, kFamilyCount + 1> kKernels{
    {CUDADIAG_FAMILIES(CUDADIAG_FAMILY_CHOICE) Choice<Family>{Family::program, "program"}}};
#undef CUDADIAG_FAMILY_CHOICE

constexpr std::string_view to_string(Family f) { return choice_name(kKernels, f); }
// A catalog family (suites, the child protocol).
constexpr std::optional<Family> parse_family(std::string_view text) { return parse_choice(kFamilies, text); }
// A report's result.kernel.
constexpr std::optional<Family> parse_kernel(std::string_view text) { return parse_choice(kKernels, text); }

}  // namespace cudadiag::cases

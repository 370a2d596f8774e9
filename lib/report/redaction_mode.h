#pragma once
// How a report's redaction tokens were made (report.redaction.mode): under a site key
// (keyed: the same value has the same token in every report of that key), under a random
// key (per_report: tokens pair up within the report only), or, in reports written before
// tokens were keyed, unkeyed (no mode written).
#include <cstdint>

#include "util/choices.h"

namespace cudadiag::report {

enum class RedactionMode : std::uint8_t { keyed, per_report, unkeyed };
// The words the report writes; unkeyed has none (the member is absent).
inline constexpr ChoiceTable<RedactionMode, 2> kRedactionModes{{
    {RedactionMode::keyed, "keyed"},
    {RedactionMode::per_report, "per_report"},
}};

}  // namespace cudadiag::report

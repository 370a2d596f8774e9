#pragma once
// JSON forms of descriptors and verdicts: case parameters (parent -> child), the
// report's details and extra["tma"], and text for the terminal.
#include <string>

#include "report/report.h"
#include "tma/descriptor.h"
#include "tma/validator.h"

namespace cudadiag::tma {

using json = report::json;

// {"dtype","rank","dims","strides","box","element_strides","interleave","swizzle",
//  "l2_promotion","oob_fill","address"}; enum values by short name (or a number when
// outside the known range); address as "0x..." text.
json to_json(const Descriptor& d);
// Accepts names or numbers for the enums; element_strides defaults to all 1; rank
// defaults to dims.size(). Throws std::invalid_argument naming the key.
Descriptor descriptor_from_json(const json& j);

json to_json(const Finding& f);
// {"valid", "errors": n, "warnings": n, "findings": [...]}
json to_json(const Verdict& v);

// Human-readable lines: "error   tma.global_stride.multiple_of_16 globalStrides[0] = 2: ..."
std::string format_findings(const Verdict& v);

}  // namespace cudadiag::tma

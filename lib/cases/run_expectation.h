#pragma once
// Which expectation applies to one run of a catalog case chosen by allocator and
// CUDA_LAUNCH_BLOCKING (the `fault` and `index-select` commands), and which profile
// name the result carries (profiles::profile_name_for_run).
#include <map>
#include <string>

#include "cases/catalog.h"

namespace cudadiag::cases {

// expected[profile_name_for_run(...)], else the same without "blocking+" (blocking moves
// where an error surfaces, not whether it does), else expected.otherwise, else none.
Expectation expectation_for_run(const CaseDef& c, profiles::Allocator a, bool blocking);

// Fills "blocking", "blocking+nocache", "blocking+fence", "blocking+sanitizer" (and
// "blocking+<other fence side>") from their non-blocking entries where absent, so that a
// plain expectation_for(case, profile) finds them too.
void add_blocking_variants(ProfileExpectations& expected);

}  // namespace cudadiag::cases

#pragma once
// Which expectation applies to one run of a catalog case chosen by allocator and
// CUDA_LAUNCH_BLOCKING (the `fault` and `index-select` commands), and which profile
// name the result carries.
#include <string>

#include "cases/catalog.h"

namespace cudadiag::cases {

// pool -> "default", direct -> "nocache", the case's fence_allocator -> "fence", the
// other fence side -> its allocator name ("fence-front"); with blocking, "blocking+"
// in front ("blocking" alone for pool). Throws std::invalid_argument for an unknown allocator.
std::string profile_for_run(const std::string& allocator, bool blocking, const std::string& fence_allocator);

// expected[profile_for_run(...)], else the same without "blocking+" (blocking moves
// where an error surfaces, not whether it does), else expected["*"], else "".
std::string expectation_for_run(const CaseDef& c, const std::string& allocator, bool blocking);

// Fills "blocking", "blocking+nocache", "blocking+fence", "blocking+sanitizer" (and
// "blocking+<other fence side>") from their non-blocking entries where absent, so that a
// plain expectation_for(case, profile) finds them too.
void add_blocking_variants(std::map<std::string, std::string>& expected);

}  // namespace cudadiag::cases

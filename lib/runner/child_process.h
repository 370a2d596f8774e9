#pragma once
// run_child with an external stop request, shared by run_child() and Pool.
#include <atomic>
#include <chrono>

#include "runner/runner.h"

namespace cudadiag::runner::detail {

// Like run_child(); additionally, once *stop is true, the child gets `stop_grace`
// more before it is terminated like at its deadline (and ends as timeout).
ChildOutcome run_child_stoppable(const ChildSpec& spec, const std::atomic<bool>* stop,
                                 std::chrono::milliseconds stop_grace);

}  // namespace cudadiag::runner::detail

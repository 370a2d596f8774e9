#pragma once
// A hang costs one timeout, not one per rung. A kernel that never finishes makes every
// rung wait out its deadline (memcheck's ten times longer): on an H100 a spinning kernel
// under `--timeout 15` took 274 s over five rungs to name what the first rung's dump had
// named. Once a run's GPU core dump names where the hang's warps wait (a kernel and a
// line), the rungs above add nothing, unless the user asked for them (--rungs given, or
// --sanitize always): the ladder stops there, and says so.
#include <string>

#include "run/judge.h"
#include "run/rungs.h"

namespace cudadiag::run {

// The hang a timed-out run's dump names: "wait_flag(int volatile*) at hang.cu:4 (1 of 1
// warps there)". Empty when the run did not time out, or no dump names a kernel and a
// line where its warps wait.
std::string named_hang(const RunJudgement& j);

// Why the rungs above `j`'s do not run: "the hang is named (...): the rungs above it
// would only wait out their own deadlines ..."; empty when the ladder goes on (no named
// hang, or the rungs were asked for).
std::string hang_stop_reason(const RunJudgement& j, const RunOptions& opts);

}  // namespace cudadiag::run

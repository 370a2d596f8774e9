#pragma once
// The one place where `cudadiag run`'s judged runs meet the report model (report::Result,
// report::Verdict). Everything else in lib/run is independent of the report, so a
// change of the model changes only to_result.cpp.
#include <string>
#include <string_view>

#include "run/judge.h"
#include "run/run_verdict.h"
#include "report/report.h"

namespace cudadiag::run {

// One run as a report result: kernel "program", case_id "program.<rung>", profile = the
// rung, params {command, rung, repeat}, outcome mapped onto the report's vocabulary
// (clean and fence_not_effective -> ok, exit_code -> no_result, does_not_start ->
// skipped; details.run_outcome keeps the rung outcome), the error annotated from the
// taxonomy, how the child ended, its Xid lines, memcheck's findings, and in details:
// the fence summary, the attribution, and the recognised error lines.
report::Result to_result(const RunObservation& obs, const RunJudgement& j);

// The error's next step as it fits the rung it is printed for: the taxonomy's advice to
// re-run with a repro profile becomes what the ladder's rungs do (the fence and sanitizer
// rungs after native or blocking, memcheck after a fence rung, memcheck's own records on
// the sanitizer rung); the rest of the advice stays.
std::string run_next_step(Rung rung, std::string_view taxonomy_step);

// status = the verdict kind; reasons = the reason line, the evidence, then the notes.
report::Verdict to_report_verdict(const RunVerdict& v);

}  // namespace cudadiag::run

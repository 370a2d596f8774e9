#pragma once
// What happens to results after their children ended, in this order: the sanitizer's
// XML is parsed in, CUDA that could not start becomes "skipped", every result is judged
// against its planned expectation, and kernel-log Xid lines go to the results of the
// children that caused them. Shared by `repro` and the single-case commands.
#include <string>
#include <vector>

#include "cases/expectation.h"
#include "host/xid.h"
#include "profiles/profile.h"
#include "report/report.h"
#include "suite/executor.h"

namespace cudadiag::suite {

// Parses the sanitizer XML of a finished child into r.sanitizer (with the nearest
// buffer from r.buffers, and the distances from the child's text output).
void attach_sanitizer(report::Result& r, const std::string& xml_path);

// True when r.sanitizer (parsed memcheck XML) holds a memory-access finding.
bool sanitizer_found_access_error(const report::Result& r);

// A CUDA child that could not start CUDA (no driver, no device) did not run the GPU
// part: such a result becomes skipped with the reason; returns the reason, or "".
std::string skip_if_cuda_unusable(report::Result& r);

// Judges r against the expectation. Skipped results are recorded, not judged. Under a
// sanitizer profile, memcheck findings that name a bad access count as caught (the
// program's next call returns 719) even if the program itself saw no error.
void judge_result(report::Result& r, const cases::Expectation& e, const profiles::Profile& p);

// Attaches the Xid events to the results of the children that caused them
// (suite/xid_attach.h's rules), using every child's pid and time window.
void attach_kernel_log(std::vector<ExecutedCase>& cases, const std::vector<ChildRecord>& children,
                       const std::vector<host::XidEvent>& events);

}  // namespace cudadiag::suite

#pragma once
// The verdict of `cudadiag run` over every judged run (all rungs, all repeats):
//   exposed         a rung failed with a CUDA error (or a signal) in every one of its runs;
//                   says which rung exposed it first and the most precise evidence:
//                   allocation + direction + bytes (fence and Xid 31), else memcheck's
//                   finding, else the error text
//   flaky           failures, but no rung failed in all of its runs: failure rates with
//                   95% Wilson intervals
//   clean           every run clean, and a rung that can see silent overruns ran and
//                   could: the fence was effective, or memcheck ran clean (a program
//                   that never used CUDA had nothing to fence: clean too); never when
//                   a process of a fenced run may have used CUDA outside the fence (an
//                   exec the interposer could not follow, CUDA under RTLD_DEEPBIND); a
//                   run that one of the tool's own settings broke (broken_by) is not
//                   counted: it checked nothing
//   does_not_start  the command did not start
//   inconclusive    nothing failed but nothing could have seen an overrun (fence not
//                   effective, not run or broken by the tool's own setting, no
//                   sanitizer), only the fence failed and the
//                   fence may be the cause, the program fails the same way everywhere
//                   without a CUDA error, or CUDA could not start (no driver, no device)
// Exit codes (report::exit_code_for): 0 clean; 1 exposed, flaky, inconclusive (findings,
// or none that can be trusted); 2 does_not_start: a command that does not exist or
// cannot be executed is an input error, like a file that does not exist; 3 CUDA could
// not start in the program: the GPU part could not run.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/vocabulary.h"
#include "run/coverage.h"
#include "run/judge.h"
#include "run/rungs.h"
#include "stats/wilson.h"

namespace cudadiag::run {

// The verdict of a run: one of report::statuses_of("run") (exposed, clean, flaky,
// does_not_start, inconclusive), the report's own vocabulary.
using VerdictKind = report::VerdictStatus;

struct RungStats {
  Rung rung = Rung::native;
  int runs = 0;
  int failures = 0;
  stats::Interval ci;                     // 95% Wilson interval of the failure rate
  std::map<std::string, int> outcomes;    // outcome name -> runs
};

struct SkippedRung {
  Rung rung = Rung::native;
  std::string reason;
  bool after_named_hang = false;  // not run: a rung below had named a hang (hang_stop.h)
};

struct RunVerdict {
  VerdictKind kind = VerdictKind::inconclusive;
  std::string reason;    // one line
  std::vector<std::string> notes;  // further lines: rates, fence limits, machine Xids, skipped rungs
  bool cuda_could_not_start = false;  // every failing run failed because CUDA could not start
  std::optional<Rung> first_exposed_by;
  std::optional<std::size_t> evidence_run;  // index into the runs of the evidence below
  std::string evidence;                     // one line
  std::vector<RungStats> rungs;             // rungs that ran, in ladder order
  Coverage coverage;                        // what the rungs that ran could and could not have seen
};

// `runs` in the order they ran; `skipped`: rungs planned but not run, and why.
RunVerdict decide_run_verdict(const std::vector<RunJudgement>& runs, const std::vector<SkippedRung>& skipped);

// The command's exit code for the verdict (report::exit_code_for: the one rule);
// `interrupted`: a stop request cut the session short.
int exit_code_of(const RunVerdict& v, bool interrupted = false);

// Per-rung failure counts with their intervals, in ladder order.
std::vector<RungStats> rung_stats(const std::vector<RunJudgement>& runs);

// The most precise evidence among the failing runs: its index and one line.
std::optional<std::pair<std::size_t, std::string>> best_evidence(const std::vector<RunJudgement>& runs);

}  // namespace cudadiag::run

#pragma once
// What `cudadiag run` is asked to do, resolved once before anything runs: the options as
// the command line gave them, already typed (Args: the CLI parses --rungs, --sanitize,
// --env and the numbers into these fields), and what the parent looks up around them
// (evidence::Parent: its own executable, its environment, the host). resolve_request turns the two
// into the Request that the session (run_session.h) and the report (run_report.h) take:
// the command found on the PATH it will get, the interposer found next to the binary, the
// user's GPU core dump variables, the --keep-dumps directory checked, the host facts and
// the compute-sanitizer lookup. Nothing is started and nothing is read twice later.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/parent.h"
#include "host/host_facts.h"
#include "run/run_report.h"
#include "run/run_session.h"
#include "run/rungs.h"

namespace cudadiag::run {

// The options of `cudadiag run`, typed.
struct Args {
  std::vector<std::string> command;      // CMD ARGS... as given after --
  std::vector<Rung> rungs = all_rungs(); // --rungs, in ladder order
  bool rungs_given = false;              // --rungs was on the command line (not the default)
  SanitizeMode sanitize = SanitizeMode::automatic;
  bool stop_at_first = false;
  int repeat = 1;
  double timeout_s = 3600;               // per run
  std::map<std::string, std::string> env;  // --env NAME=VALUE
  std::uint32_t fence_align = 16;
  FenceSide fence_side = FenceSide::back;  // --fence-front: front
  std::optional<std::uint64_t> quarantine_mb;
  std::uint64_t recycle_mb = kDefaultRecycleMb;
  bool no_kernel_log = false;
  std::string keep_dumps;                // "" : dumps removed once read
  bool coredump = true;                  // --no-coredump: false
};

struct Request {
  SessionOptions session;  // the ladder and how each run starts (run_session.h)
  RunFacts facts;          // "CUDA cannot start" from the host facts; the sanitizer lookup
  host::HostFacts host;
};

// Throws UsageError (exit 2) naming what is wrong: no command, a command not found or
// not executable on the PATH it will get (--env PATH first), --timeout not positive,
// --keep-dumps not a directory or with no dumps armed to keep, --sanitize never with the
// sanitizer rung asked for by name. The interposer missing is no error: the fence rungs are
// skipped with session.run.interposer_missing_reason.
// Rings, memcheck's XML and dumps go to work_dir.
Request resolve_request(const Args& args, const evidence::Parent& parent, const std::string& work_dir);

}  // namespace cudadiag::run

#pragma once
// What `cudadiag repro` is asked to do, resolved once before anything runs: the options
// as the command line gave them (Args: --profiles already parsed by the CLI) and what the
// parent knows of itself (evidence::Parent) become the Request that run_plan and
// repro_report take: the suite loaded and filtered, the plan options (profiles, repeats,
// the seed series, the devices chosen from the host facts), the compute-sanitizer lookup
// when a planned profile wants it, the plan, the number of children at once, and how the
// children run.
#include <string>
#include <vector>

#include "evidence/parent.h"
#include "host/host_facts.h"
#include "profiles/profile.h"
#include "suite/plan.h"
#include "suite/repro_report.h"
#include "suite/run_plan.h"
#include "suite/suite.h"

namespace cudadiag::suite {

// The options of `cudadiag repro`, typed.
struct Args {
  std::string suite = "default";              // a built-in suite's name, a JSON file, or - (stdin)
  std::string case_glob;                      // "" : every case
  std::vector<profiles::Profile> profiles;    // --profiles; empty: the suite's
  int jobs = 0;                               // 0: from the CPU and device count
  int repeat = 0;                             // 0: the suite's
  std::string devices = "all";
  int plan_devices = 0;                       // --plan-devices: plan for N devices as if present
  double timeout_s = 60;                      // a case without its own deadline
  std::string seed;                           // "" : a fresh series
  bool coredump = true;                       // --no-coredump: false
};

struct Request {
  Suite suite;
  PlanOptions plan_options;
  Plan plan;
  ReproFacts facts;      // the sanitizer lookup, the jobs
  SuiteRunOptions run;   // scratch_dir and on_result are the caller's to set
  host::HostFacts host;
};

// Says what it resolved on stderr (the plan's size and -j; why the GPU part cannot run;
// a sanitizer profile skipped). Throws UsageError (exit 2) naming what is wrong: an
// unknown suite or a suite file that does not parse, a bad --seed, --devices naming no
// usable device (device_selection.h).
Request resolve_request(const Args& args, const evidence::Parent& parent);

}  // namespace cudadiag::suite

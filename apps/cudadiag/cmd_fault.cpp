// `cudadiag fault CASE_ID`: runs one fault-catalog case in a child under a chosen
// allocator, judged against the catalog's expectation for that setting.
#include <limits>
#include <memory>

#include "cases/catalog.h"
#include "cases/run_expectation.h"
#include "cli_common.h"
#include "commands.h"
#include "repeat/seeds.h"
#include "suite/single_case.h"
#include "util/errors.h"
#include "util/interrupt.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

struct FaultOptions {
  CommonOptions common;
  std::string case_id;
  profiles::Allocator allocator = profiles::Allocator::pool;
  bool blocking = false;
  bool coredump = true;  // --no-coredump: false
  int repeat = 1;
  long long k = kNotGiven;
  long long elements = kNotGiven;
  bool no_bisect = false;
  std::string seed;    // first seed of the series (decimal or 0x hex)
  std::string replay;  // one run with exactly this seed
  double timeout_s = 0;  // 0: the case's own deadline
};

const cases::CaseDef& find_fault_case(const std::string& id) {
  const cases::CaseDef* c = cases::find_case(id);
  if (!c) c = cases::find_case("fault." + id);
  if (!c || c->family != cases::Family::fault)
    throw UsageError("fault: unknown case '" + id + "' (see `cudadiag list --kernel fault`)");
  return *c;
}

void run_fault(const FaultOptions& o) {
  configure_logging(o.common);
  const cases::CaseDef& def = find_fault_case(o.case_id);
  cases::json params = def.params;
  if (o.k != kNotGiven) params["k"] = o.k;
  if (o.elements != kNotGiven) params["elements"] = o.elements;
  try {
    params = cases::normalize_params(cases::Family::fault, params);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("fault ") + def.id + ": " + e.what());
  }

  suite::CaseSpec spec;
  try {
    spec.seed = repeat::seed_request(o.seed, o.replay);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  spec.case_id = def.id;
  spec.family = def.family;
  spec.params = params;
  spec.allocator = o.allocator;
  spec.repeat = o.repeat;

  const auto& inv = invocation();
  suite::SingleCaseOptions so;
  so.command = "fault";
  so.self_exe = inv.self_exe;
  so.argv = inv.argv;
  so.envp = inv.envp;
  so.stop = &stop_flag();
  so.blocking = o.blocking;
  so.coredump = o.coredump;
  so.bisect = !o.no_bisect;
  so.deadline_ms = o.timeout_s > 0 ? static_cast<int>(o.timeout_s * 1000.0) : def.deadline_ms;
  so.fence_side = def.fence_allocator;
  so.expected = cases::expectation_for_run(def, o.allocator, o.blocking);
  report::Report rep = suite::run_single_case(spec, so);
  rep.verdict = suite::expectation_verdict(rep);
  emit_report(rep, o.common);
  set_exit_code(report::exit_code_for(rep.verdict.status));
}

}  // namespace

void set_fault_command(CLI::App& app) {
  auto opts = std::make_shared<FaultOptions>();
  auto* cmd = app.add_subcommand("fault", "Run one fault-catalog reproducer in a child process");
  set_help_footer(cmd,
                  "Exit codes: 0 outcome as expected for this allocator, 1 not as expected, 2 usage error, "
                  "3 no GPU.",
                  {"cudadiag fault oob-write --allocator fence   # the overrun faults at once",
                   "cudadiag list --kernel fault                 # the cases"});
  cmd->add_option("case", opts->case_id, "Catalog id, e.g. fault.oob-write (the 'fault.' prefix is optional)")
      ->required();
  add_allocator_option(cmd, opts->allocator);
  cmd->add_flag("--blocking", opts->blocking, "Set CUDA_LAUNCH_BLOCKING=1 in the child");
  add_coredump_option(cmd, opts->coredump, "a case that faults runs once more with GPU core dumps armed");
  add_repeat_option(cmd, opts->repeat, "Runs in the child (stops at the first CUDA error)")->capture_default_str();
  // The catalog's limits (lib/cases/catalog_fault.cpp) checks again, with the other parameters.
  cmd->add_option("-k", opts->k, "Overrun/underrun distance in elements (oob-*, underrun-*)")
      ->check(integer_between(1, 1024));
  cmd->add_option("--elements", opts->elements, "fp32 elements per buffer (multiple of 4)")
      ->check(integer_between(64, 1LL << 28));
  cmd->add_flag("--no-bisect", opts->no_bisect, "Do not bisect a fence fault to its buffer");
  add_seed_options(cmd, opts->seed, &opts->replay, "its input");
  add_timeout_option(cmd, opts->timeout_s,
                     "Seconds the child may take before it is ended (default: the case's own deadline)",
                     seconds_between(1.0, 86400.0));
  add_common_options(cmd, opts->common);
  cmd->callback([opts] { run_fault(*opts); });
}

}  // namespace cudadiag::app

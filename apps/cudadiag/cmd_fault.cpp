// `cudadiag fault CASE_ID`: runs one fault-catalog case in a child under a chosen
// allocator, judged against the catalog's expectation for that setting.
#include <limits>
#include <memory>

#include "cases/catalog.h"
#include "cases/run_expectation.h"
#include "cases/run_seed.h"
#include "cli_common.h"
#include "commands.h"
#include "single_case.h"
#include "suite/verdict.h"
#include "util/errors.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

constexpr long long kNotGiven = std::numeric_limits<long long>::min();  // keep the catalog's value

struct FaultOptions {
  CommonOptions common;
  std::string case_id;
  std::string allocator = "pool";
  bool blocking = false;
  int repeat = 1;
  long long k = kNotGiven;
  long long elements = kNotGiven;
  bool no_bisect = false;
  std::string seed;    // first seed of the series (decimal or 0x hex)
  std::string replay;  // one run with exactly this seed
};

const cases::CaseDef& find_fault_case(const std::string& id) {
  const cases::CaseDef* c = cases::find_case(id);
  if (!c) c = cases::find_case("fault." + id);
  if (!c || c->kernel != "fault")
    throw UsageError("fault: unknown case '" + id + "' (see `cudadiag list --kernel fault`)");
  return *c;
}

void run_fault(const FaultOptions& o) {
  configure_logging(o.common);
  const cases::CaseDef& def = find_fault_case(o.case_id);
  if (o.repeat < 1) throw UsageError("--repeat: must be at least 1");
  cases::json params = def.params;
  if (o.k != kNotGiven) params["k"] = o.k;
  if (o.elements != kNotGiven) params["elements"] = o.elements;
  try {
    cases::add_seed_params(o.seed, o.replay, params);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  try {
    params = cases::normalize_params("fault", params);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("fault ") + def.id + ": " + e.what());
  }

  cases::CaseSpec spec;
  spec.case_id = def.id;
  spec.kernel = def.kernel;
  spec.params = params;
  spec.allocator = o.allocator;
  spec.repeat = o.repeat;

  SingleCaseOptions so;
  so.command = "fault";
  so.allocator = o.allocator;
  so.blocking = o.blocking;
  so.bisect = !o.no_bisect;
  so.deadline_ms = def.deadline_ms;
  so.fence_allocator = def.fence_allocator;
  so.expected = cases::expectation_for_run(def, o.allocator, o.blocking);
  report::Report rep = run_single_case(spec, so);

  const report::Result& r = rep.results.front();
  int code = kExitOk;
  if (gpu_unavailable(r)) {
    rep.verdict.status = "no_gpu";
    rep.verdict.reasons = {"the GPU part could not run: " + rep.gpu.value("reason", std::string())};
    code = kExitEnvironment;
  } else {
    rep.verdict = suite::decide_verdict(rep.results, false);
    if (rep.verdict.status == "healthy") rep.verdict.reasons.push_back(def.id + ": " + r.outcome + " as expected (" + r.expected + ")");
    code = suite::exit_code_for(rep.verdict, false);
  }
  emit_report(rep, o.common);
  set_exit_code(code);
}

}  // namespace

void set_fault_command(CLI::App& app) {
  auto opts = std::make_shared<FaultOptions>();
  auto* cmd = app.add_subcommand("fault", "Run one fault-catalog reproducer in a child process");
  cmd->footer(
      "Exit codes: 0 outcome as expected for this allocator, 1 not as expected, 2 usage error, "
      "3 no GPU.\nAllocators: pool (slabs, overruns silent), direct (one cudaMalloc per buffer), "
      "fence-back / fence-front (buffer flush against unmapped memory: one element past the end / "
      "before the start faults).");
  cmd->add_option("case", opts->case_id, "Catalog id, e.g. fault.oob-write (the 'fault.' prefix is optional)")
      ->required();
  cmd->add_option("--allocator", opts->allocator, "pool | direct | fence-back | fence-front")
      ->check(CLI::IsMember({"pool", "direct", "fence-back", "fence-front"}))
      ->capture_default_str();
  cmd->add_flag("--blocking", opts->blocking, "Set CUDA_LAUNCH_BLOCKING=1 in the child");
  cmd->add_option("--repeat", opts->repeat, "Runs in the child (stops at the first CUDA error)")->capture_default_str();
  cmd->add_option("-k", opts->k, "Overrun/underrun distance in elements (oob-*, underrun-*)");
  cmd->add_option("--elements", opts->elements, "fp32 elements per buffer (multiple of 4)");
  cmd->add_flag("--no-bisect", opts->no_bisect, "Do not bisect a fence fault to its buffer");
  cmd->add_option("--seed", opts->seed, "First seed of the repeat series (default: a fresh one); run i uses its own seed");
  cmd->add_option("--replay", opts->replay,
                  "Run once with exactly this run seed (a report's first_failure.seed), checked on the host too");
  add_common_options(cmd, opts->common);
  cmd->callback([opts] { run_fault(*opts); });
}

}  // namespace cudadiag::app

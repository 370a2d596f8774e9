// `cudadiag index-select`: one index_select configuration on a heads slice of K and V
// (the ring-attention seed), run in a child and compared bit-exactly with the CPU.
#include <limits>
#include <memory>

#include "index_select/index_select_params.h"
#include "cli_common.h"
#include "commands.h"
#include "repeat/seeds.h"
#include "suite/single_case.h"
#include "util/errors.h"
#include "util/interrupt.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

struct IndexSelectOptions {
  CommonOptions common;
  std::string shape, heads, indices, layout, bounds, dtype, index_dtype;
  long long dilation = kNotGiven;
  long long offset = kNotGiven;
  profiles::Allocator allocator = profiles::Allocator::pool;
  bool blocking = false;
  bool coredump = true;  // --no-coredump: false
  int repeat = 1;
  bool no_bisect = false;
  std::string seed;    // first seed of the series (decimal or 0x hex)
  std::string replay;  // one run with exactly this seed
  double timeout_s = 0;  // 0: the default deadline of a single case
};

namespace is = cudadiag::index_select;

report::json params_json(const IndexSelectOptions& o) {
  report::json j = report::json::object();
  try {
    if (!o.shape.empty()) j["shape"] = is::parse_shape(o.shape);
    if (!o.heads.empty()) {
      const auto [h0, h1] = is::parse_heads(o.heads);
      j["heads"] = {h0, h1};
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("index-select: ") + e.what());
  }
  if (o.dilation != kNotGiven) j["dilation"] = o.dilation;
  if (o.offset != kNotGiven) j["offset"] = o.offset;
  if (!o.indices.empty()) j["indices"] = o.indices;
  if (!o.layout.empty()) j["layout"] = o.layout;
  if (!o.bounds.empty()) j["bounds"] = o.bounds;
  if (!o.dtype.empty()) j["dtype"] = o.dtype;
  if (!o.index_dtype.empty()) j["index_dtype"] = o.index_dtype;
  return j;
}

void run_index_select(const IndexSelectOptions& o) {
  configure_logging(o.common);
  is::IndexSelectParams p;
  try {
    p = is::index_select_params_from_json(params_json(o));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("index-select: ") + e.what());
  }
  suite::CaseSpec spec;
  spec.case_id = is::case_id_for(p);
  spec.family = cases::Family::index_select;
  spec.params = is::to_json(p);
  spec.allocator = o.allocator;
  spec.repeat = o.repeat;
  try {
    spec.seed = repeat::seed_request(o.seed, o.replay);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  const auto& inv = invocation();
  suite::SingleCaseOptions so;
  so.command = "index-select";
  so.self_exe = inv.self_exe;
  so.argv = inv.argv;
  so.envp = inv.envp;
  so.stop = &stop_flag();
  so.blocking = o.blocking;
  so.coredump = o.coredump;
  so.bisect = !o.no_bisect;
  if (o.timeout_s > 0) so.deadline_ms = static_cast<int>(o.timeout_s * 1000.0);
  so.fence_side = o.allocator == profiles::Allocator::fence_front ? o.allocator : profiles::Allocator::fence_back;
  so.expected = cases::Expectation::parse(is::index_select_expectation(p, o.allocator));
  report::Report rep = suite::run_single_case(spec, so);
  rep.verdict = suite::output_verdict(rep, o.allocator);
  emit_report(rep, o.common);
  set_exit_code(report::exit_code_for(rep.verdict.status));
}

}  // namespace

void set_index_select_command(CLI::App& app) {
  auto opts = std::make_shared<IndexSelectOptions>();
  auto* cmd = app.add_subcommand(
      "index-select", "Gather along S of [B,S,H,D] K and V on a heads slice (the ring-attention seed)");
  cmd->footer(
      "Layouts: stride (the view's real strides: correct), assume-contiguous (view pointer with packed "
      "strides: wrong elements), copy (.contiguous() first: the seed's fix), offset-twice (view offset "
      "applied twice: reads past the end of K).\nExit codes: 0 output correct, 1 mismatch or CUDA error, "
      "2 usage error, 3 no GPU.");
  set_help_footer(cmd, cmd->get_footer(),
                  {"cudadiag index-select --layout offset-twice --allocator fence",
                   "cudadiag index-select --repeat 100 --seed 7   # the same inputs again"});
  cmd->add_option("--shape", opts->shape, "B,S,H,D (default 2,512,8,64)");
  cmd->add_option("--heads", opts->heads, "h0:h1 head slice (default the second half: H/2:H)");
  // At most S and S-1: checked with the shape (lib/index_select/index_select_params.cpp).
  cmd->add_option("--dilation", opts->dilation, "Gather every N-th position along S (default 2)")
      ->check(integer_between(1, std::numeric_limits<long long>::max()));
  cmd->add_option("--offset", opts->offset, "First gathered position (default (S-1) % dilation: the last is S-1)")
      ->check(integer_between(0, std::numeric_limits<long long>::max()));
  cmd->add_option("--indices", opts->indices, choice_list(is::kIndices, " | ") + " (oob: last index = S; negative: -1)")
      ->check(CLI::IsMember(choice_names(is::kIndices)));
  cmd->add_option("--layout", opts->layout, choice_list(is::kLayouts, " | ") + " (default stride)")
      ->check(CLI::IsMember(choice_names(is::kLayouts)));
  cmd->add_option("--bounds", opts->bounds, choice_list(is::kBounds, " | ") + " (default checked: device assert)")
      ->check(CLI::IsMember(choice_names(is::kBounds)));
  cmd->add_option("--dtype", opts->dtype, choice_list(is::kElementTypes, " | ") + " (default fp16)")
      ->check(CLI::IsMember(choice_names(is::kElementTypes)));
  cmd->add_option("--index-dtype", opts->index_dtype, choice_list(is::kIndexTypes, " | ") + " (default int64)")
      ->check(CLI::IsMember(choice_names(is::kIndexTypes)));
  add_allocator_option(cmd, opts->allocator);
  cmd->add_flag("--blocking", opts->blocking, "Set CUDA_LAUNCH_BLOCKING=1 in the child");
  add_coredump_option(cmd, opts->coredump, "a case that faults runs once more with GPU core dumps armed");
  add_repeat_option(cmd, opts->repeat, "Runs with fresh random inputs (stops at the first CUDA error)")
      ->capture_default_str();
  add_seed_options(cmd, opts->seed, &opts->replay, "its K and V");
  add_timeout_option(cmd, opts->timeout_s, "Seconds the child may take before it is ended (default 60)",
                     seconds_between(1.0, 86400.0));
  cmd->add_flag("--no-bisect", opts->no_bisect, "Do not bisect a fence fault to its buffer");
  add_common_options(cmd, opts->common);
  cmd->callback([opts] { run_index_select(*opts); });
}

}  // namespace cudadiag::app

// `cudadiag index-select`: one index_select configuration on a heads slice of K and V
// (the ring-attention seed), run in a child and compared bit-exactly with the CPU.
#include <limits>
#include <memory>

#include "cases/index_select_params.h"
#include "cli_common.h"
#include "commands.h"
#include "single_case.h"
#include "util/errors.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

constexpr long long kNotGiven = std::numeric_limits<long long>::min();  // keep the default

struct IndexSelectOptions {
  CommonOptions common;
  std::string shape, heads, indices, layout, bounds, dtype, index_dtype;
  long long dilation = kNotGiven;
  long long offset = kNotGiven;
  std::string allocator = "pool";
  bool blocking = false;
  int repeat = 1;
  bool no_bisect = false;
};

cases::json params_json(const IndexSelectOptions& o) {
  cases::json j = cases::json::object();
  try {
    if (!o.shape.empty()) j["shape"] = cases::parse_shape(o.shape);
    if (!o.heads.empty()) {
      const auto [h0, h1] = cases::parse_heads(o.heads);
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

std::string case_id_for(const cases::IndexSelectParams& p) {
  return "index_select." + p.layout + "." + p.indices + "." + p.bounds;
}

void run_index_select(const IndexSelectOptions& o) {
  configure_logging(o.common);
  if (o.repeat < 1) throw UsageError("--repeat: must be at least 1");
  cases::IndexSelectParams p;
  try {
    p = cases::index_select_params_from_json(params_json(o));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("index-select: ") + e.what());
  }
  cases::CaseSpec spec;
  spec.case_id = case_id_for(p);
  spec.kernel = "index_select";
  spec.params = cases::to_json(p);
  spec.allocator = o.allocator;
  spec.repeat = o.repeat;

  SingleCaseOptions so;
  so.command = "index-select";
  so.allocator = o.allocator;
  so.blocking = o.blocking;
  so.bisect = !o.no_bisect;
  so.fence_allocator = o.allocator == "fence-front" ? "fence-front" : "fence-back";
  so.expected = cases::index_select_expectation(p, o.allocator);
  report::Report rep = run_single_case(spec, so);

  const report::Result& r = rep.results.front();
  int code = kExitOk;
  if (gpu_unavailable(r)) {
    rep.verdict.status = "no_gpu";
    rep.verdict.reasons = {"the GPU part could not run: " + rep.gpu.value("reason", std::string())};
    code = kExitEnvironment;
  } else if (r.outcome == "ok") {
    rep.verdict.status = "ok";
    rep.verdict.reasons = {"output matches the CPU reference bit for bit"};
  } else {
    // A finding about the configuration; whether a healthy host gives the same is the
    // expectation's business.
    rep.verdict.status = "findings";
    std::string what = r.outcome;
    if (r.error) what += " " + r.error->name + " (" + std::to_string(r.error->code) + ") at " + r.error->surfaced_at;
    else if (!r.reason.empty()) what += ": " + r.reason;
    rep.verdict.reasons.push_back(what);
    if (r.expectation_met.has_value())
      rep.verdict.reasons.push_back(std::string(*r.expectation_met ? "as expected" : "NOT as expected") +
                                    " for these parameters under " + o.allocator + " (" + r.expected + ")");
    code = kExitFindings;
  }
  emit_report(rep, o.common);
  set_exit_code(code);
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
  cmd->add_option("--shape", opts->shape, "B,S,H,D (default 2,512,8,64)");
  cmd->add_option("--heads", opts->heads, "h0:h1 head slice (default the second half: H/2:H)");
  cmd->add_option("--dilation", opts->dilation, "Gather every N-th position along S (default 2)");
  cmd->add_option("--offset", opts->offset, "First gathered position (default (S-1) % dilation: the last is S-1)");
  cmd->add_option("--indices", opts->indices, "valid | oob (last index = S) | negative (last index = -1)")
      ->check(CLI::IsMember({"valid", "oob", "negative"}));
  cmd->add_option("--layout", opts->layout, "stride | assume-contiguous | copy | offset-twice (default stride)")
      ->check(CLI::IsMember({"stride", "assume-contiguous", "copy", "offset-twice"}));
  cmd->add_option("--bounds", opts->bounds, "checked (device assert) | unchecked (default checked)")
      ->check(CLI::IsMember({"checked", "unchecked"}));
  cmd->add_option("--dtype", opts->dtype, "fp16 | bf16 | fp32 (default fp16)")
      ->check(CLI::IsMember({"fp16", "bf16", "fp32"}));
  cmd->add_option("--index-dtype", opts->index_dtype, "int32 | int64 (default int64)")
      ->check(CLI::IsMember({"int32", "int64"}));
  cmd->add_option("--allocator", opts->allocator, "pool | direct | fence-back | fence-front")
      ->check(CLI::IsMember({"pool", "direct", "fence-back", "fence-front"}))
      ->capture_default_str();
  cmd->add_flag("--blocking", opts->blocking, "Set CUDA_LAUNCH_BLOCKING=1 in the child");
  cmd->add_option("--repeat", opts->repeat, "Runs with fresh random inputs (stops at the first CUDA error)")
      ->capture_default_str();
  cmd->add_flag("--no-bisect", opts->no_bisect, "Do not bisect a fence fault to its buffer");
  add_common_options(cmd, opts->common);
  cmd->callback([opts] { run_index_select(*opts); });
}

}  // namespace cudadiag::app

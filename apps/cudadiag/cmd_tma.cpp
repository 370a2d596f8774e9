// `cudadiag tma`: a TMA descriptor (from a CuTe/FlashInfer printout, or given
// explicitly) checked against the documented rules of cuTensorMapEncodeTiled on the
// host, then encoded by the real driver and loaded with cp.async.bulk.tensor in a
// child when a GPU is there. --sweep rebuilds the descriptor across a range (the
// seed's "seq_len 1 fails, seq_len 2 works" in one command); --table (hidden) runs the
// validator's rule table through the driver.
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>

#include "cli_common.h"
#include "commands.h"
#include "evidence/cuda_start.h"
#include "host/host_facts.h"
#include "report/render.h"
#include "tma/tma_report_view.h"
#include "util/text_layout.h"
#include "util/printable.h"
#include "suite/device_selection.h"
#include "suite/executor.h"
#include "tma/descriptor.h"
#include "tma/tma_check.h"
#include "tma/tma_json.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/interrupt.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

using json = report::json;

struct TmaOptions {
  CommonOptions common;
  std::string from_log;
  tma::ExplicitForm form;
  std::vector<std::string> sweeps;
  unsigned seq_dim = 1;
  unsigned heads_dim = 2;
  std::string size1_stride = "as-is";
  bool host_only = false;
  bool no_load = false;
  bool table = false;
  int target_cc = 0;  // --target-cc: major*10+minor; 0 = the device's when it runs, else unknown
  double timeout_s = 120;
};

tma::CheckRequest request_of(const TmaOptions& o) {
  tma::CheckRequest req;
  req.table = o.table;
  if (!o.from_log.empty()) {
    req.log_name = o.from_log == "-" ? "<stdin>" : o.from_log;
    req.log_text = read_file_or_stdin(o.from_log);
  }
  req.explicit_form = o.form;
  req.sweeps = o.sweeps;
  req.sweep_options = tma::SweepOptions{o.seq_dim, o.heads_dim, tma::parse_size1_stride(o.size1_stride)};
  return req;
}

// The driver's encode (and the load check) in a child; where the host cannot start CUDA
// (`why`), every item's device part is skipped with that reason.
void run_on_device(std::vector<tma::Item>& items, const TmaOptions& o, const std::string& why) {
  std::vector<suite::CaseSpec> specs;
  for (size_t i = 0; i < items.size(); ++i) {
    suite::CaseSpec s;
    s.index = static_cast<int>(i);
    s.case_id = items[i].id;
    s.family = cases::Family::tma;
    s.params = json{{"descriptor", tma::to_json(items[i].d)}, {"load", !o.no_load && !o.table}};
    s.allocator = profiles::Allocator::direct;
    specs.push_back(std::move(s));
  }
  suite::ChildSettings settings;
  settings.env_set = suite::job_binding_env();
  settings.deadline = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  if (!why.empty()) {
    for (size_t i = 0; i < items.size(); ++i) {
      items[i].device = suite::make_result(specs[i], settings);
      items[i].device->outcome = report::Outcome::skipped;
      items[i].device->reason = why;
    }
    return;
  }
  const auto results = suite::execute(specs, settings, invocation().self_exe, &stop_flag());
  for (size_t i = 0; i < results.size() && i < items.size(); ++i) items[i].device = results[i];
}

void run_tma(const TmaOptions& o) {
  configure_logging(o.common);
  auto items = tma::collect_items(request_of(o));
  if (o.target_cc != 0 && (o.target_cc < 10 || o.target_cc > 999))
    throw UsageError("--target-cc " + std::to_string(o.target_cc) +
                     ": expected the compute capability as major*10+minor, e.g. 90 for sm_90 or 100 for sm_100");
  std::optional<int> target_cc;
  if (o.target_cc != 0) target_cc = o.target_cc;
  tma::validate_items(items, target_cc);

  std::string gpu_line;
  bool gpu_ran = false;
  std::string why;  // the host cannot start CUDA (evidence::gpu_unavailable)
  if (o.host_only) {
    gpu_line = "GPU part: not run (--host-only)";
  } else {
    why = evidence::gpu_unavailable(host::gather_host_facts(invocation().self_exe));
    run_on_device(items, o, why);
    gpu_ran = why.empty() && !tma::no_device(items);
    // Without --target-cc the device is the target: judge with its compute capability, as
    // the child does when it compares with the driver.
    if (gpu_ran && !target_cc)
      if ((target_cc = tma::device_cc(items))) tma::validate_items(items, target_cc);
    gpu_line = gpu_ran ? "GPU part: cuTensorMapEncodeTiled" + std::string(o.table || o.no_load ? "" : " + TMA box loads") +
                             " in a child process"
                       : "GPU part: could not run - " + (items.empty() || !items.front().device ? std::string("?")
                                                                                                 : items.front().device->reason);
  }

  auto r = report::new_report(invocation().argv, "tma");
  r.environment = report::capture_environment(invocation().envp);
  r.gpu = {gpu_ran, gpu_ran ? std::nullopt
                            : std::optional<std::string>(o.host_only ? "--host-only" : !why.empty() ? why : gpu_line)};
  auto judged = tma::judge_items(items, o.table, !o.host_only, gpu_ran);
  r.results = std::move(judged.results);
  r.verdict = judged.verdict;
  if (r.verdict.status == report::VerdictStatus::no_gpu && !why.empty())
    r.verdict.reasons.push_back("the GPU part could not run: " + why);
  const std::string mode = o.table ? "table" : !o.sweeps.empty() ? "sweep" : !o.from_log.empty() ? "log" : "explicit";
  json tma_section = tma::tma_section(items, o.table, o.size1_stride, mode);
  tma_section["target_cc"] = target_cc ? json(*target_cc) : json(nullptr);
  // The command's own lines, so that `show` prints the report as the command did.
  tma_section["gpu_part"] = gpu_line;
  tma_section["target_text"] =
      !target_cc ? std::string("unknown (give --target-cc; packed 16U4/16U6 types need sm_100+)")
                 : "sm_" + std::to_string(*target_cc) + (o.target_cc ? " (--target-cc)" : " (the device)");
  r.extra.set("tma", report::value_from_json(tma_section));
  report::finish_report(r);
  mark_interrupted(r);

  const auto format = report::parse_format(o.common.format);
  if (format == report::Format::json) emit_report(r, o.common);
  else emit_text(tma::render_tma_report(r, format == report::Format::md, "the tma report"), o.common);
  set_exit_code(report::exit_code_for(r.verdict.status));
}

}  // namespace

void set_tma_command(CLI::App& app) {
  auto opts = std::make_shared<TmaOptions>();
  auto* cmd = app.add_subcommand(
      "tma",
      "Check a TMA descriptor (cuTensorMapEncodeTiled) against the driver's rules, then encode it with the real "
      "driver and load every box on an sm_90 GPU");
  cmd->add_option("--from-log", opts->from_log,
                  "Read descriptor blocks printed by CuTe/FlashInfer ('TMA Desc Addr:' ...) from FILE, or - for stdin");
  cmd->add_option("--dtype", opts->form.dtype,
                  "Element type, by name, alias or CUtensorMapDataType code (case-insensitive): " +
                      tma::data_type_help());
  // Any value of the driver's argument types: the validator judges the descriptor's own limits.
  const auto u64 = unsigned_between(0, std::numeric_limits<std::uint64_t>::max());
  const auto u32 = unsigned_between(0, std::numeric_limits<std::uint32_t>::max());
  cmd->add_option("--dims", opts->form.dims, "globalDim, innermost first, e.g. 128,1,32")->delimiter(',')->check(u64);
  cmd->add_option("--strides", opts->form.strides,
                  "globalStrides in bytes for dimensions 1..rank-1, exactly as the driver takes them, e.g. 2,256")
      ->delimiter(',')
      ->check(u64);
  cmd->add_option("--box", opts->form.box, "boxDim, e.g. 64,128,1")->delimiter(',')->check(u32);
  cmd->add_option("--element-strides", opts->form.element_strides, "elementStrides (default all 1)")
      ->delimiter(',')
      ->check(u32);
  cmd->add_option("--interleave", opts->form.interleave, "none|16B|32B")->capture_default_str();
  cmd->add_option("--swizzle", opts->form.swizzle, "none|32B|64B|128B|128B_atom_32B|128B_atom_32B_flip_8B|128B_atom_64B")
      ->capture_default_str();
  cmd->add_option("--l2-promotion", opts->form.l2_promotion, "none|64B|128B|256B")->capture_default_str();
  cmd->add_option("--oob-fill", opts->form.oob_fill, "none|nan")->capture_default_str();
  cmd->add_option("--address", opts->form.address,
                  "globalAddress; only its alignment (mod 256) is reproduced on the device")
      ->capture_default_str();
  cmd->add_option("--sweep", opts->sweeps,
                  "Rebuild the descriptor across a range: seq-len=0..8, heads=1,8,32, dtype=bf16,fp16 (repeatable)");
  // A descriptor has at most kMaxRank dimensions.
  const auto dimension = integer_between(0, tma::kMaxRank - 1);
  cmd->add_option("--seq-dim", opts->seq_dim, "Dimension whose extent is the sequence length")
      ->check(dimension)
      ->capture_default_str();
  cmd->add_option("--heads-dim", opts->heads_dim, "Dimension whose extent is the number of heads")
      ->check(dimension)
      ->capture_default_str();
  cmd->add_option("--size1-stride", opts->size1_stride,
                  "Sweep: stride of a size-1 dimension: as-is (the framework's degenerate stride, as in the base) "
                  "or canonical (the dense stride)")
      ->check(CLI::IsMember({"as-is", "canonical"}))
      ->capture_default_str();
  cmd->add_option("--target-cc", opts->target_cc,
                  "Compute capability the descriptor is for, major*10+minor (90 = sm_90, 100 = sm_100); "
                  "default: the device's when the GPU part runs, else unknown (packed types then only warn)")
      ->check(integer_between(0, 999));
  cmd->add_flag("--host-only", opts->host_only, "Only the host validator: no child, no GPU");
  cmd->add_flag("--no-load", opts->no_load, "Encode with the driver but do not run the load kernel");
  add_timeout_option(cmd, opts->timeout_s, "Seconds per descriptor in the child", seconds_between(1.0, 86400.0))
      ->check(seconds_between(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_flag("--table", opts->table, "Run the validator's rule table through the driver")->group("");
  add_common_options(cmd, opts->common);
  set_help_footer(cmd,
                  "Exit codes: 0 valid (and the GPU agrees), 1 rule violations or a device surprise (driver "
                  "disagrees, load mismatch), 2 bad input, 3 the GPU part could not run.",
                  {"cudadiag tma --from-log crash.log          # descriptors CuTe/FlashInfer printed",
                   "cudadiag tma --dtype bf16 --dims 64,128 --strides 128 --box 64,64 --host-only"});
  cmd->callback([opts] { run_tma(*opts); });
}

}  // namespace cudadiag::app

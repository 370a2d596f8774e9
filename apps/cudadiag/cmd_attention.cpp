// `cudadiag attention`: one configuration of the bundled FlashAttention-2 style kernel
// (or a sweep over the compiled tile grid), each configuration in its own child, with
// repeat-N failure statistics and the seed report's fault knobs.
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention_config.h"
#include "attention/attention_sweep.h"
#include "cases/expectation.h"
#include "probe_cuda.h"
#include "cli_common.h"
#include "commands.h"
#include "report/redact.h"
#include "suite/device_selection.h"
#include "repeat/seeds.h"
#include "report/render.h"
#include "suite/executor.h"
#include "util/errors.h"
#include "util/exit_codes.h"
#include "evidence/interruption.h"
#include "host/host_facts.h"
#include "util/interrupt.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

using report::json;
namespace at = cudadiag::attention;

struct AttentionOptions {
  CommonOptions common;
  at::AttentionConfig config;
  profiles::Allocator allocator = profiles::Allocator::pool;
  bool blocking = false;
  int repeat = 1;
  bool sweep = false;
  std::string sweep_filter;
  int jobs = 1;
  bool bench = false;
  bool coredump = true;  // --no-coredump: false
  double timeout_s = 120.0;
  std::string seed;    // --seed, as typed
  std::string replay;  // --replay, as typed
  std::optional<repeat::SeedRequest> seed_request;  // both, parsed
};

std::vector<at::AttentionConfig> planned_configs(const AttentionOptions& o) {
  at::AttentionConfig base = o.config;
  base.strides = {};
  at::fill_default_strides(base);
  if (!o.sweep) return {base};
  std::vector<at::TileConfig> tiles;
  try {
    tiles = at::plan_sweep(o.sweep_filter);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--sweep-filter: ") + e.what());
  }
  std::vector<at::AttentionConfig> out;
  for (const auto& t : tiles) {
    auto c = base;
    c.block_m = t.block_m, c.block_n = t.block_n, c.warps = t.warps;
    out.push_back(c);
  }
  return out;
}

suite::CaseSpec spec_of(const at::AttentionConfig& c, const AttentionOptions& o) {
  suite::CaseSpec spec;
  spec.case_id = at::case_id_of(c);
  spec.family = cases::Family::attention;
  spec.params = at::attention_params_to_json(c);
  if (o.bench) spec.params["bench"] = true;
  spec.seed = o.seed_request;
  spec.allocator = o.allocator;
  spec.repeat = o.repeat;
  return spec;
}

// A configuration that cannot run, decided here without a child.
report::Result rejected(const suite::CaseSpec& spec, const suite::ChildSettings& settings,
                        const std::vector<std::string>& why) {
  report::Result r = suite::make_result(spec, settings);
  r.device = report::Device::host_only();
  r.outcome = report::Outcome::invalid_config;
  r.reason = why.front();
  r.details.set("reasons", report::value_from_json(report::json(why)));
  return r;
}

size_t device_smem_limit(const std::vector<report::DeviceInfo>& devices) {
  if (!devices.empty())
    if (const report::Value* v = devices[0].facts.find("shared_mem_per_block_optin"); v && v->is_integral())
      if (const auto n = v->as_int(); n && *n >= 0) return static_cast<size_t>(*n);
  return at::kSmemOptinH100;
}

std::string render_with_sweep(report::Report& r, const CommonOptions& common) {
  const auto format = report::parse_format(common.format);
  if (common.redact) report::redact(r, redaction_inputs(common));
  std::string text = report::render(r, format, use_color(common));
  if (const report::Value* sweep = r.extra.find("sweep"); format != report::Format::json && sweep) {
    const bool md = format == report::Format::md;
    text += md ? "\n## Sweep\n\n" : "\nSweep (configuration x outcome)\n";
    text += at::render_sweep_table(report::to_json(*sweep), md);
  }
  return text;
}

void run_attention(AttentionOptions& o) {
  configure_logging(o.common);
  if (!o.sweep && !o.sweep_filter.empty()) throw UsageError("--sweep-filter needs --sweep");
  if (o.bench && o.sweep) throw UsageError("--bench times one configuration; it cannot be combined with --sweep");
  if (!o.replay.empty() && o.sweep)
    throw UsageError("--replay runs one configuration once; it cannot be combined with --sweep");
  try {
    o.seed_request = repeat::seed_request(o.seed, o.replay);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  // Malformed values are usage errors; well-formed tiles the kernel lacks are findings.
  if (const auto bad = at::malformed_attention(o.config); !bad.empty()) {
    std::string all;
    for (const auto& b : bad) all += (all.empty() ? "" : "; ") + b;
    throw UsageError("attention: " + all);
  }
  const auto configs = planned_configs(o);

  const auto& inv = invocation();
  auto r = report::new_report(inv.argv, "attention");
  r.environment = report::capture_environment(inv.envp);
  auto settings = std::make_shared<suite::ChildSettings>();
  if (o.blocking) settings->env_set["CUDA_LAUNCH_BLOCKING"] = "1";
  settings->env_set.merge(suite::job_binding_env());
  settings->profile = o.blocking ? "blocking" : "default";
  settings->deadline = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));

  std::vector<suite::CaseSpec> specs;
  for (const auto& c : configs) specs.push_back(spec_of(c, o));

  // Configurations that cannot work are decided here, without a child or a GPU; the
  // device's shared-memory limit is known once the probe ran.
  std::vector<std::optional<report::Result>> results(configs.size());
  auto reject_invalid = [&](size_t limit) {
    for (size_t i = 0; i < configs.size(); ++i)
      if (!results[i])
        if (const auto why = at::validate_attention(configs[i], limit); !why.empty())
          results[i] = rejected(specs[i], *settings, why);
  };
  reject_invalid(std::numeric_limits<size_t>::max());

  const bool any_to_run = std::any_of(results.begin(), results.end(), [](const auto& x) { return !x; });
  if (!any_to_run) r.gpu = {false, "not needed: every configuration was rejected on the host"};
  if (any_to_run) {
    const auto facts = host::gather_host_facts(inv.self_exe);
    const auto probe = probe_cuda_on(facts, inv.self_exe, std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000)));
    r.gpu = {probe.ran, probe.reason};
    r.driver = probe.ran ? report::driver_info_from_json(probe.driver, "CUDA probe") : facts.driver;
    r.devices = probe.devices.is_array() ? report::devices_from_json(probe.devices, "CUDA probe") : facts.devices;
    if (!probe.ran) spdlog::warn("GPU part could not run: {}", probe.reason);
    else reject_invalid(device_smem_limit(r.devices));
    suite::ExecutorOptions eo{inv.self_exe, o.jobs, &stop_flag(), kStopGrace};
    eo.coredump = o.coredump;
    suite::Executor ex(std::move(eo));
    std::vector<size_t> submitted;
    for (size_t i = 0; i < configs.size(); ++i) {
      if (results[i]) continue;
      if (!probe.ran) {
        results[i] = suite::make_result(specs[i], *settings);
        results[i]->outcome = report::Outcome::skipped;
        results[i]->reason = probe.reason;
        continue;
      }
      specs[i].index = static_cast<int>(i);
      ex.submit({specs[i]}, settings);
    }
    ex.run([](suite::ExecutedCase& c) {
      spdlog::info("{}: {}{}", c.result.case_id, report::to_string(c.result.outcome),
                   c.result.reason.empty() ? "" : " (" + c.result.reason + ")");
    });
    ex.run_site_runs([](const suite::ExecutedCase& c) {
      return suite::wants_site_run(c.result, suite::SitePolicy::every_failure);
    });
    for (const auto& c : ex.cases()) results[static_cast<size_t>(c.spec.index)] = c.result;
    evidence::record_interruption(r, ex.interrupted());
  }

  for (size_t i = 0; i < configs.size(); ++i) {
    report::Result res = std::move(*results[i]);
    cases::judge(res, cases::Expectation::parse(at::attention_expectation(configs[i], o.allocator)));
    r.results.push_back(std::move(res));
  }
  if (o.sweep) r.extra.set("sweep", report::value_from_json(at::sweep_rows(r.results)));
  r.verdict = at::attention_verdict(r.results, r.gpu);
  report::finish_report(r);
  emit_text(render_with_sweep(r, o.common), o.common);
  set_exit_code(report::exit_code_for(r.verdict.status, r.invocation.interrupted.value_or(false)));
}

}  // namespace

void set_attention_command(CLI::App& app) {
  auto o = std::make_shared<AttentionOptions>();
  auto* cmd = app.add_subcommand(
      "attention",
      "Run the bundled FlashAttention-2 style kernel (tensor cores) at one tile configuration or a sweep, "
      "verified against a reference, with fault knobs and repeat-N failure statistics");
  auto& c = o->config;
  const auto size = integer_between(1, std::numeric_limits<int>::max());
  cmd->add_option("--batch", c.batch, "Batch size")->check(size)->capture_default_str();
  cmd->add_option("--heads", c.heads, "Heads")->check(size)->capture_default_str();
  cmd->add_option("--seq-len", c.seq_len, "Sequence length (any; tails are masked)")->check(size)->capture_default_str();
  cmd->add_option("--head-dim", c.head_dim, "Head dimension (compiled: " + at::compiled_list(at::Knob::head_dim) + ")")
      ->check(size)
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--dtype", [&c](const std::string& s) { c.dtype = *parse_choice(at::kDTypeChoices, s); },
         "fp16 or bf16")
      ->check(CLI::IsMember(choice_names(at::kDTypeChoices)))
      ->default_str(std::string(at::to_string(c.dtype)));
  cmd->add_flag("--causal", c.causal, "Causal mask");
  cmd->add_option_function<std::string>(
         "--engine", [&c](const std::string& s) { c.engine = *parse_choice(at::kEngineChoices, s); },
         "mma (mma.sync, every compiled tile) or wgmma (sm_90a: head dim 128, block 128 x 64|128, 8 warps; "
         "default mma)")
      ->check(CLI::IsMember(choice_names(at::kEngineChoices)));
  cmd->add_option("--block-m", c.block_m, "Query rows per CTA (compiled: " + at::compiled_list(at::Knob::block_m) + ")")
      ->check(size)
      ->capture_default_str();
  cmd->add_option("--block-n", c.block_n, "Key rows per tile (compiled: " + at::compiled_list(at::Knob::block_n) + ")")
      ->check(size)
      ->capture_default_str();
  cmd->add_option("--warps", c.warps, "Warps per CTA (compiled: " + at::compiled_list(at::Knob::warps) + ")")
      ->check(size)
      ->capture_default_str();
  cmd->add_option("--misalign-bytes", c.misalign_bytes,
                  "Fault knob: offset the Q/K/V base pointers by N bytes (16-byte loads then fault with 716)")
      ->check(integer_between(0, std::numeric_limits<int>::max()));
  cmd->add_flag("--no-tail-mask", c.no_tail_mask,
                "Fault knob: load and score K/V rows >= S (silent in a pool, 700 with --allocator fence-back)");
  cmd->add_flag("--drop-barrier", c.drop_barrier,
                "Fault knob: drop the barrier between cp.async completion and reading the tile; warps 1.. "
                "lag before their copies, so warp 0 reads rows not yet landed (wrong results)");
  cmd->add_flag("--smem-overflow", c.smem_overflow, "Fault knob: write each V tile one shared-memory row too far");
  add_allocator_option(cmd, o->allocator);
  cmd->add_flag("--blocking", o->blocking, "Run the child with CUDA_LAUNCH_BLOCKING=1");
  add_coredump_option(cmd, o->coredump, "a configuration that faults runs once more with GPU core dumps armed");
  add_repeat_option(cmd, o->repeat, "Runs inside one child (stops at a sticky error)")->capture_default_str();
  cmd->add_flag("--sweep", o->sweep, "Run every compiled (block_m, block_n, warps), each in its own child");
  cmd->add_option("--sweep-filter", o->sweep_filter, "Restrict the sweep, e.g. \"block_m=64,80;warps=4\"");
  cmd->add_option("-j,--jobs", o->jobs, "Children at once during a sweep")->check(integer_between(1, 64))->capture_default_str();
  add_timeout_option(cmd, o->timeout_s, "Seconds per child before it is terminated (the CUDA probe too)",
                     seconds_between(1.0, 86400.0))
      ->capture_default_str();
  add_seed_options(cmd, o->seed, &o->replay, "its Q, K and V");
  cmd->add_option("--race-window", c.race_window,
                  "Drop-barrier race: cycles the late warps of a late CTA wait before their first copies")
      ->check(integer_between(0, at::kMaxRaceWindowCycles))
      ->capture_default_str();
  cmd->add_option("--race-rate", c.race_rate,
                  "Drop-barrier race: probability that a CTA is late in a run (drawn from the run's seed)")
      ->check(number_between(0.0, 1.0))
      ->capture_default_str();
  // Used by scripts/bench-attention.sh: time one configuration (cudaEvents, median of 30).
  cmd->add_flag("--bench", o->bench, "")->group("");
  add_common_options(cmd, o->common);
  set_help_footer(cmd, "Exit codes: 0 ok/healthy, 1 findings, 2 usage or input error, 3 GPU part could not run, 4 internal error.",
                  {"cudadiag attention --sweep -j 4 -o sweep.json   # every compiled tile",
                   "cudadiag attention --drop-barrier --repeat 1000 --seed 7"});
  cmd->callback([o, cmd] {
    // A sweep runs every compiled tile: one chosen on the command line would be ignored.
    for (const char* tile : {"--block-m", "--block-n", "--warps"})
      if (o->sweep && cmd->count(tile) > 0)
        throw UsageError(std::string(tile) + " picks one tile, but --sweep runs them all; restrict the sweep with "
                                             "--sweep-filter, e.g. \"block_m=64;warps=4\"");
    run_attention(*o);
  });
}

}  // namespace cudadiag::app

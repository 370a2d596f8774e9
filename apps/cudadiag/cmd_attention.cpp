// `cudadiag attention`: one configuration of the bundled FlashAttention-2 style kernel
// (or a sweep over the compiled tile grid), each configuration in its own child, with
// repeat-N failure statistics and the seed report's fault knobs.
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cases/attention_config.h"
#include "cases/attention_sweep.h"
#include "cases/case_spec.h"
#include "cases/expectation.h"
#include "cases/run_seed.h"
#include "child_probe.h"
#include "cli_common.h"
#include "commands.h"
#include "report/redact.h"
#include "report/render.h"
#include "suite/executor.h"
#include "util/errors.h"
#include "util/exit_codes.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

using report::json;

struct AttentionOptions {
  CommonOptions common;
  cases::AttentionConfig config;
  std::string allocator = "pool";
  bool blocking = false;
  int repeat = 1;
  bool sweep = false;
  std::string sweep_filter;
  int jobs = 1;
  bool bench = false;
  double timeout_s = 120.0;
  std::string seed;    // first seed of the series (decimal or 0x hex)
  std::string replay;  // one run with exactly this seed
};

std::string normalized_allocator(const std::string& a) { return a == "fence" ? "fence-back" : a; }

std::string case_id_of(const cases::AttentionConfig& c) {
  return "attention." + c.dtype + ".d" + std::to_string(c.head_dim) + ".bm" + std::to_string(c.block_m) +
         "-bn" + std::to_string(c.block_n) + "-w" + std::to_string(c.warps) + (c.engine == "mma" ? "" : "." + c.engine);
}

std::vector<cases::AttentionConfig> planned_configs(const AttentionOptions& o) {
  cases::AttentionConfig base = o.config;
  base.strides = {};
  cases::fill_default_strides(base);
  if (!o.sweep) return {base};
  std::vector<cases::TileConfig> tiles;
  try {
    tiles = cases::plan_sweep(o.sweep_filter);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--sweep-filter: ") + e.what());
  }
  std::vector<cases::AttentionConfig> out;
  for (const auto& t : tiles) {
    auto c = base;
    c.block_m = t.block_m, c.block_n = t.block_n, c.warps = t.warps;
    out.push_back(c);
  }
  return out;
}

report::Result host_result(const cases::AttentionConfig& c, const std::string& allocator,
                           const std::string& outcome, const std::string& reason) {
  report::Result r;
  r.case_id = case_id_of(c);
  r.kernel = "attention";
  r.params = cases::attention_params_to_json(c);
  r.allocator = allocator;
  r.device = "host";
  r.outcome = outcome;
  r.reason = reason;
  return r;
}

size_t device_smem_limit(const json& devices) {
  if (devices.is_array() && !devices.empty() && devices[0].contains("shared_mem_per_block_optin") &&
      devices[0]["shared_mem_per_block_optin"].is_number_unsigned())
    return devices[0]["shared_mem_per_block_optin"].get<size_t>();
  return cases::kSmemOptinH100;
}

std::string render_with_sweep(report::Report& r, const CommonOptions& common) {
  const auto format = report::parse_format(common.format);
  if (common.redact) {
    auto j = report::to_json(r);
    report::redact(j);
    r = report::report_from_json(j);
  }
  std::string text = report::render(r, format, use_color(common));
  if (format != report::Format::json && r.extra.contains("sweep")) {
    const bool md = format == report::Format::md;
    text += md ? "\n## Sweep\n\n" : "\nSweep (configuration x outcome)\n";
    text += cases::render_sweep_table(r.extra["sweep"], md);
  }
  return text;
}

void run_attention(AttentionOptions& o) {
  configure_logging(o.common);
  o.allocator = normalized_allocator(o.allocator);
  if (!o.sweep && !o.sweep_filter.empty()) throw UsageError("--sweep-filter needs --sweep");
  if (o.bench && o.sweep) throw UsageError("--bench times one configuration; it cannot be combined with --sweep");
  if (!o.replay.empty() && o.sweep) throw UsageError("--replay runs one configuration once; it cannot be combined with --sweep");
  json seed_params = json::object();
  try {
    cases::add_seed_params(o.seed, o.replay, seed_params);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const auto configs = planned_configs(o);

  const auto& inv = invocation();
  auto r = report::new_report(inv.argv, "attention");

  // Configurations that cannot work are decided here, without a child or a GPU.
  std::vector<report::Result> results(configs.size());
  std::vector<bool> decided(configs.size(), false);
  std::vector<size_t> to_run;
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto why = cases::validate_attention(configs[i], std::numeric_limits<size_t>::max());
    if (!why.empty()) {
      results[i] = host_result(configs[i], o.allocator, "invalid_config", why.front());
      results[i].details["reasons"] = why;
      decided[i] = true;
    } else {
      to_run.push_back(i);
    }
  }

  bool gpu_ran = true;
  if (!to_run.empty()) {
    const auto probe = run_cuda_probe(inv.self_exe, std::chrono::milliseconds(60000));
    r.gpu = json{{"ran", probe.ran}, {"reason", probe.reason}};
    r.driver = probe.driver;
    if (probe.devices.is_array()) r.devices = probe.devices;
    gpu_ran = probe.ran;
    if (!probe.ran) {
      spdlog::warn("GPU part could not run: {}", probe.reason);
      for (size_t i : to_run) results[i] = host_result(configs[i], o.allocator, "skipped", probe.reason);
    } else {
      // The device's shared-memory limit is known from the probe: decide it here too.
      const size_t limit = device_smem_limit(r.devices);
      std::vector<std::vector<cases::CaseSpec>> batches;
      std::vector<size_t> batch_config;
      for (size_t i : to_run) {
        const auto why = cases::validate_attention(configs[i], limit);
        if (!why.empty()) {
          results[i] = host_result(configs[i], o.allocator, "invalid_config", why.front());
          results[i].details["reasons"] = why;
          continue;
        }
        cases::CaseSpec spec;
        spec.index = 0;
        spec.case_id = case_id_of(configs[i]);
        spec.kernel = "attention";
        spec.params = cases::attention_params_to_json(configs[i]);
        if (o.bench) spec.params["bench"] = true;
        for (const auto& [key, value] : seed_params.items()) spec.params[key] = value;
        spec.allocator = o.allocator;
        spec.repeat = o.repeat;
        batches.push_back({spec});
        batch_config.push_back(i);
      }
      suite::ExecOptions eo;
      eo.self_exe = inv.self_exe;
      if (o.blocking) eo.env_set["CUDA_LAUNCH_BLOCKING"] = "1";
      eo.profile = o.blocking ? "blocking" : "default";
      eo.deadline = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
      auto done = suite::execute_batches(batches, eo, o.jobs, nullptr, [](const report::Result& x) {
        spdlog::info("{}: {}{}", x.case_id, x.outcome, x.reason.empty() ? "" : " (" + x.reason + ")");
      });
      for (size_t b = 0; b < done.size() && b < batch_config.size(); ++b) results[batch_config[b]] = done[b];
    }
  }

  bool all_met = true;
  for (size_t i = 0; i < results.size(); ++i) {
    auto& res = results[i];
    if (res.outcome == "skipped") continue;
    cases::judge(res, cases::attention_expectation(configs[i], o.allocator));
    if (res.expectation_met == false) {
      all_met = false;
      r.verdict.reasons.push_back(res.case_id + ": " + res.outcome +
                                  (res.reason.empty() ? "" : " (" + res.reason + ")") + ", expected " + res.expected);
    }
  }
  r.results = results;
  if (o.sweep) r.extra["sweep"] = cases::sweep_rows(results);
  r.verdict.status = !gpu_ran ? "no_gpu" : (all_met ? "ok" : "findings");
  if (!gpu_ran) r.verdict.reasons.push_back("the GPU part could not run: " + r.gpu.value("reason", std::string()));
  report::finish_report(r);
  emit_text(render_with_sweep(r, o.common), o.common);
  set_exit_code(!all_met ? kExitFindings : (!gpu_ran ? kExitEnvironment : kExitOk));
}

}  // namespace

void set_attention_command(CLI::App& app) {
  auto o = std::make_shared<AttentionOptions>();
  auto* cmd = app.add_subcommand(
      "attention",
      "Run the bundled FlashAttention-2 style kernel (tensor cores) at one tile configuration or a sweep, "
      "verified against a reference, with fault knobs and repeat-N failure statistics");
  auto& c = o->config;
  cmd->add_option("--batch", c.batch, "Batch size")->capture_default_str();
  cmd->add_option("--heads", c.heads, "Heads")->capture_default_str();
  cmd->add_option("--seq-len", c.seq_len, "Sequence length (any; tails are masked)")->capture_default_str();
  cmd->add_option("--head-dim", c.head_dim, "Head dimension (compiled: 64, 128)")->capture_default_str();
  cmd->add_option("--dtype", c.dtype, "fp16 or bf16")->check(CLI::IsMember({"fp16", "bf16"}))->capture_default_str();
  cmd->add_flag("--causal", c.causal, "Causal mask");
  cmd->add_option("--engine", c.engine,
                  "mma (mma.sync, every compiled tile) or wgmma (sm_90a: head dim 128, block 128 x 64|128, 8 warps)")
      ->check(CLI::IsMember({"mma", "wgmma"}))
      ->capture_default_str();
  cmd->add_option("--block-m", c.block_m, "Query rows per CTA (compiled: 16, 32, 64, 80, 128)")->capture_default_str();
  cmd->add_option("--block-n", c.block_n, "Key rows per tile (compiled: 16, 32, 64, 128)")->capture_default_str();
  cmd->add_option("--warps", c.warps, "Warps per CTA (compiled: 1, 2, 4, 8)")->capture_default_str();
  cmd->add_option("--misalign-bytes", c.misalign_bytes,
                  "Fault knob: offset the Q/K/V base pointers by N bytes (16-byte loads then fault with 716)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-tail-mask", c.no_tail_mask,
                "Fault knob: load and score K/V rows >= S (silent in a pool, 700 with --allocator fence-back)");
  cmd->add_flag("--drop-barrier", c.drop_barrier,
                "Fault knob: drop the barrier between cp.async completion and reading the tile; warps 1.. "
                "lag before their copies, so warp 0 reads rows not yet landed (wrong results)");
  cmd->add_flag("--smem-overflow", c.smem_overflow, "Fault knob: write each V tile one shared-memory row too far");
  cmd->add_option("--allocator", o->allocator, "Device memory for Q/K/V/O")
      ->check(CLI::IsMember({"pool", "direct", "fence", "fence-back", "fence-front"}))
      ->capture_default_str();
  cmd->add_flag("--blocking", o->blocking, "Run the child with CUDA_LAUNCH_BLOCKING=1");
  cmd->add_option("--repeat", o->repeat, "Runs inside one child (stops at a sticky error)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_flag("--sweep", o->sweep, "Run every compiled (block_m, block_n, warps), each in its own child");
  cmd->add_option("--sweep-filter", o->sweep_filter, "Restrict the sweep, e.g. \"block_m=64,80;warps=4\"");
  cmd->add_option("-j,--jobs", o->jobs, "Children at once during a sweep")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "Seconds per child before it is terminated")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed,
                  "First seed of the repeat series (default: a fresh one per child); run i's inputs come from its own seed");
  cmd->add_option("--replay", o->replay,
                  "Run once with exactly this run seed (a report's first_failure.seed), checked against the CPU "
                  "float64 reference too");
  cmd->add_option("--race-window", c.race_window,
                  "Drop-barrier race: cycles the late warps of a late CTA wait before their copies")
      ->capture_default_str();
  cmd->add_option("--race-rate", c.race_rate,
                  "Drop-barrier race: probability that a CTA is late in a run (drawn from the run's seed)")
      ->capture_default_str();
  // Used by scripts/bench-attention.sh: time one configuration (cudaEvents, median of 30).
  cmd->add_flag("--bench", o->bench, "")->group("");
  add_common_options(cmd, o->common);
  cmd->callback([o] { run_attention(*o); });
}

}  // namespace cudadiag::app

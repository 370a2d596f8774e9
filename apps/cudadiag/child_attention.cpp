// Child side of `attention`: validates the configuration against this device, prepares
// the case once, then runs it `repeat` times, every run verified on the device (fresh
// seeded inputs, poisoned output, an fp32 device reference, the comparison reduced
// there) until a CUDA error ends the series. The first run (and a replay) is also
// checked against the CPU float64 reference where the size allows. With params.bench it
// times the kernel after one verified run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cases/attention_config.h"
#include "cases/attention_reference.h"
#include "cases/run_seed.h"
#include "child_cases.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_runner.h"
#include "kernels/runtime/repeat_runs.h"
#include "stats/wilson.h"

namespace cudadiag::app::child {
namespace {

namespace ak = cudadiag::attention;
using cases::AttentionConfig;

// Runs per wait once the series is under way (the first run is alone).
constexpr int kMaxBatch = 64;

ak::Problem problem_of(const AttentionConfig& c) {
  ak::Problem p;
  p.dtype = c.dtype == "bf16" ? ak::DType::bf16 : ak::DType::fp16;
  p.engine = c.engine == "wgmma" ? ak::Engine::wgmma : ak::Engine::mma;
  p.batch = c.batch, p.heads = c.heads, p.seq_len = c.seq_len, p.head_dim = c.head_dim;
  p.causal = c.causal;
  p.block_m = c.block_m, p.block_n = c.block_n, p.warps = c.warps;
  ak::Strides* dst[] = {&p.q, &p.k, &p.v, &p.o};
  for (size_t i = 0; i < 4; ++i) *dst[i] = {c.strides[i].batch, c.strides[i].head, c.strides[i].seq};
  p.knobs.misalign_bytes = c.misalign_bytes;
  p.knobs.no_tail_mask = c.no_tail_mask;
  p.knobs.drop_barrier = c.drop_barrier;
  p.knobs.smem_overflow = c.smem_overflow;
  p.knobs.race_window = c.race_window;
  p.knobs.race_rate = c.race_rate;
  return p;
}

json comparison_json(const cases::AttentionComparison& r) {
  return json{{"rel_err", r.rel_err},
              {"non_finite", r.non_finite},
              {"first_bad_row", r.first_bad_row},
              {"reference_non_finite", r.ref_non_finite}};
}

json repeats_json(const std::map<std::string, int>& hist, int runs, const gpu::RepeatResult& r) {
  int failures = 0;
  for (const auto& [k, n] : hist)
    if (k != "ok") failures += n;
  const auto ci = stats::wilson_interval(failures, runs);
  return json{{"runs", runs},
              {"failures", failures},
              {"failure_rate", runs ? static_cast<double>(failures) / runs : 0.0},
              {"ci95_low", ci.low},
              {"ci95_high", ci.high},
              {"histogram", hist},
              {"timing", {{"seconds", r.seconds},
                          {"host_check_seconds", r.on_run_seconds},
                          {"verified_runs_per_s", r.seconds > 0 ? r.runs / r.seconds : 0.0}}}};
}

// The CPU float64 check of the last run: the kernel's output judged by the original
// rule, and the device's fp32 reference against the float64 one.
json host_check(ak::AttentionRunner& runner, const AttentionConfig& c, const cases::AttentionComparison& device,
                std::string& disagreement) {
  const auto snap = runner.snapshot();
  const auto cpu = cases::attention_reference_cpu(c, snap.q.data(), snap.k.data(), snap.v.data());
  const auto kernel = cases::compare_attention(c, snap.o.data(), cpu, cases::attention_tolerance(c.dtype));
  const double ref_err = cases::reference_rel_err(snap.ref, cpu);
  const bool ref_ok = ref_err <= cases::kReferenceAgreement;
  const bool same_verdict = kernel.pass == device.pass;
  if (!ref_ok)
    disagreement = "the device reference differs from the CPU float64 reference (rel err " + std::to_string(ref_err) + ")";
  else if (!same_verdict)
    disagreement = "the device check and the CPU float64 check disagree on this run";
  json j = comparison_json(kernel);
  j["device_reference_rel_err"] = ref_err;
  j["agrees"] = ref_ok && same_verdict;
  return j;
}

json bench(ak::AttentionRunner& runner, const AttentionConfig& c, json line) {
  constexpr int kWarmup = 5, kIters = 30;
  auto ms = runner.time(kWarmup, kIters);
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  line["details"]["bench"] = json{{"warmup", kWarmup},
                                  {"iters", kIters},
                                  {"median_ms", median},
                                  {"min_ms", ms.front()},
                                  {"max_ms", ms.back()},
                                  {"flops", cases::attention_flops(c)},
                                  {"tflops", cases::attention_flops(c) / (median * 1e-3) / 1e12}};
  return line;
}

}  // namespace

json run_attention_case(const cases::CaseSpec& spec) {
  const AttentionConfig c = cases::attention_config_from_json(spec.params);
  // Host-decidable reasons first: no CUDA call for a configuration that cannot work.
  if (auto why = cases::validate_attention(c, std::numeric_limits<size_t>::max()); !why.empty())
    return json{{"outcome", "invalid_config"}, {"reason", why.front()}, {"details", {{"reasons", why}}}};

  // Fault bisection: the named buffers get the case's allocator, the rest are direct.
  gpu::Session s(spec.fence_buffers ? gpu::AllocatorMode::direct : allocator_of(spec));
  apply_fence_buffers(spec, s);
  int device = 0, smem_optin = 0;
  CD_CHECK(s, cudaGetDevice(&device), "attribute");
  CD_CHECK(s, cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "attribute");
  if (auto why = cases::validate_attention(c, static_cast<size_t>(smem_optin)); !why.empty())
    return json{{"outcome", "invalid_config"},
                {"reason", why.front()},
                {"details", {{"reasons", why}, {"smem_optin", smem_optin}}}};
  // The wgmma engine is sm_90a machine code: it loads on compute capability 9.0 only.
  int cc_major = 0, cc_minor = 0;
  CD_CHECK(s, cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device), "attribute");
  CD_CHECK(s, cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, device), "attribute");
  if (c.engine == "wgmma" && !(cc_major == 9 && cc_minor == 0))
    return json{{"outcome", "invalid_config"},
                {"reason", "the wgmma engine is sm_90a code; this device is sm_" + std::to_string(cc_major) +
                               std::to_string(cc_minor)}};

  const ak::Problem p = problem_of(c);
  const double work = static_cast<double>(c.batch) * c.heads * c.seq_len * c.seq_len * c.head_dim;
  const bool cpu_check = work <= cases::kCpuReferenceWork;
  const bool is_bench = spec.params.value("bench", false);
  std::optional<uint64_t> replay;
  if (spec.params.contains("replay_seed")) replay = spec.params["replay_seed"].get<uint64_t>();
  int repeat = std::max(1, spec.repeat);
  if (repeat == 1 && spec.params.contains("repeat") && spec.params["repeat"].is_number_integer())
    repeat = std::max(1, spec.params["repeat"].get<int>());
  if (is_bench || replay) repeat = 1;
  const uint64_t base = spec.params.contains("seed") ? spec.params["seed"].get<uint64_t>()
                                                     : (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                                           std::random_device{}();
  const double tol = cases::attention_tolerance(c.dtype);

  json details{{"kernel", ak::kernel_name(p)},
               {"smem_bytes", cases::attention_smem_bytes(c)},
               {"smem_optin", smem_optin},
               {"threads", cases::attention_threads(c)},
               {"grid", {(c.seq_len + c.block_m - 1) / c.block_m, c.heads, c.batch}},
               {"slabs_per_warp", ak::slabs_per_warp(c.block_m, c.warps)},
               {"slabs_at_once", ak::slabs_at_once(c.block_m, c.block_n, c.warps)},
               {"reference", cpu_check ? "gpu_fp32, run 0 also cpu_fp64" : "gpu_fp32"},
               {"tolerance", tol},
               {"seed", base}};
  if (replay) details["replay_seed"] = *replay;
  std::map<std::string, int> hist;
  double max_err = 0.0;
  json first_failure = nullptr;
  try {
    ak::AttentionRunner runner(s, p, {cases::tensor_extent_elems(c, 0), cases::tensor_extent_elems(c, 1),
                                      cases::tensor_extent_elems(c, 2), cases::tensor_extent_elems(c, 3)},
                               tol, kMaxBatch);
    const auto result = gpu::repeat_runs(
        repeat, kMaxBatch, base, replay, [&](const std::vector<uint64_t>& seeds) { return runner.run(seeds); },
        [&](int run, uint64_t seed, const gpu::RunCounters& counters) {
          const auto device_cmp = cases::judge_attention(cases::attention_sums(counters, c.head_dim), tol);
          bool failed = !device_cmp.pass;
          std::string disagreement;
          if (run == 0 && cpu_check) {
            details["host_check"] = host_check(runner, c, device_cmp, disagreement);
            if (!disagreement.empty()) failed = true;
          }
          ++hist[failed ? "mismatch" : "ok"];
          max_err = std::max(max_err, std::isfinite(device_cmp.rel_err) ? device_cmp.rel_err : 1e300);
          if (failed && first_failure.is_null()) {
            first_failure = comparison_json(device_cmp);
            first_failure["run"] = run;
            first_failure["seed"] = seed;
            first_failure["replay"] = "--replay " + cases::format_seed(seed);
            if (!disagreement.empty()) first_failure["disagreement"] = disagreement;
          }
          return failed;
        });
    if (result.error) ++hist["cuda_error"];
    details["max_rel_err"] = max_err;
    if (!first_failure.is_null()) details["first_failure"] = first_failure;
    json line{{"outcome", result.error ? "cuda_error" : (hist.count("mismatch") ? "mismatch" : "ok")},
              {"repeats", repeats_json(hist, result.runs, result)},
              {"details", details}};
    if (result.error) {
      line["details"]["error_run"] = result.error_run;
      line["details"]["error_seed"] = result.error_seed;
      line["details"]["replay"] = "--replay " + cases::format_seed(result.error_seed);
      line["error"] = failure_json(*result.error);
      line["launch_log"] = launch_log_json(s);
      line["buffers"] = buffers_json(s);
    }
    if (is_bench && !result.error && hist.count("ok")) line = bench(runner, c, line);
    return line;
  } catch (const gpu::CudaError& e) {
    // Allocation, preparation or timing failed outside a verified run.
    json line = cuda_error_line(e.failure(), &s);
    details["max_rel_err"] = max_err;
    line["details"] = details;
    return line;
  }
}

}  // namespace cudadiag::app::child

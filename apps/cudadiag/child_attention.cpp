// Child side of `attention`: validates the configuration against this device, then
// runs the kernel `repeat` times (fresh random inputs and a NaN-poisoned output each
// time) and compares every run with a reference, until a sticky error ends the
// context. With params.bench it times the kernel instead (after one verified run).
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
#include "child_cases.h"
#include "kernels/attention/attention.h"
#include "stats/wilson.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::app::child {
namespace {

namespace ak = cudadiag::attention;
using cases::AttentionConfig;

ak::Problem problem_of(const AttentionConfig& c) {
  ak::Problem p;
  p.dtype = c.dtype == "bf16" ? ak::DType::bf16 : ak::DType::fp16;
  p.batch = c.batch, p.heads = c.heads, p.seq_len = c.seq_len, p.head_dim = c.head_dim;
  p.causal = c.causal;
  p.block_m = c.block_m, p.block_n = c.block_n, p.warps = c.warps;
  ak::Strides* dst[] = {&p.q, &p.k, &p.v, &p.o};
  for (size_t i = 0; i < 4; ++i) *dst[i] = {c.strides[i].batch, c.strides[i].head, c.strides[i].seq};
  p.knobs = {c.misalign_bytes, c.no_tail_mask, c.drop_barrier, c.smem_overflow};
  return p;
}

// Device buffers of one case. Sized to the exact extent so that a fenced buffer
// faults on the first element past it; the misalign knob adds its offset as slack.
struct Buffers {
  std::vector<size_t> elems;  // extent per tensor (q, k, v, o)
  ak::DeviceTensors t;
  void* raw[4] = {};
  float* ref = nullptr;  // fp32 GPU reference output, when used
};

Buffers allocate(gpu::Session& s, const AttentionConfig& c, bool gpu_reference) {
  Buffers b;
  for (int i = 0; i < 4; ++i) {
    b.elems.push_back(cases::tensor_extent_elems(c, i));
    const size_t slack = i < 3 ? static_cast<size_t>(c.misalign_bytes) : 0;
    b.raw[i] = s.alloc(cases::kTensorNames[static_cast<size_t>(i)], b.elems.back() * 2 + slack);
  }
  auto shifted = [&](int i) { return static_cast<char*>(b.raw[i]) + c.misalign_bytes; };
  b.t = {shifted(0), shifted(1), shifted(2), b.raw[3]};
  if (gpu_reference)
    b.ref = s.alloc_n<float>("reference_out", static_cast<size_t>(c.batch) * c.heads * c.seq_len * c.head_dim);
  return b;
}

struct RunResult {
  std::string outcome;  // ok | mismatch
  cases::AttentionComparison cmp;
};

// Fresh uniform [-1, 1] inputs, rounded to the dtype; returns them as floats (the
// values the kernel sees) for the CPU reference.
std::vector<float> upload_random(gpu::Session& s, ak::DType dt, void* dst, size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(n);
  for (auto& e : x) e = u(rng);
  std::vector<uint16_t> bits(n);
  ak::to_device_format(dt, x.data(), bits.data(), n);
  ak::from_device_format(dt, bits.data(), x.data(), n);
  s.copy_to_device(dst, bits.data(), n * 2);
  return x;
}

RunResult run_once(gpu::Session& s, const AttentionConfig& c, const ak::Problem& p, const Buffers& b,
                   std::mt19937_64& rng) {
  const auto q = upload_random(s, p.dtype, const_cast<void*>(b.t.q), b.elems[0], rng);
  const auto k = upload_random(s, p.dtype, const_cast<void*>(b.t.k), b.elems[1], rng);
  const auto v = upload_random(s, p.dtype, const_cast<void*>(b.t.v), b.elems[2], rng);
  // 0xFFFF is NaN in both fp16 and bf16: any output element not written stays NaN.
  s.memset(b.t.o, 0xFF, b.elems[3] * 2);
  ak::launch_attention(s, p, b.t);
  s.synchronize();

  std::vector<uint16_t> bits(b.elems[3]);
  s.copy_to_host(bits.data(), b.t.o, bits.size() * 2);
  std::vector<float> out(bits.size());
  ak::from_device_format(p.dtype, bits.data(), out.data(), bits.size());

  std::vector<double> ref;
  if (b.ref) {
    s.memset(b.ref, 0xFF, static_cast<size_t>(c.batch) * c.heads * c.seq_len * c.head_dim * sizeof(float));
    ak::launch_reference(s, p, b.t, b.ref);
    s.synchronize();
    std::vector<float> r(static_cast<size_t>(c.batch) * c.heads * c.seq_len * c.head_dim);
    s.copy_to_host(r.data(), b.ref, r.size() * sizeof(float));
    ref.assign(r.begin(), r.end());
  } else {
    ref = cases::attention_reference_cpu(c, q.data(), k.data(), v.data());
  }
  RunResult rr;
  rr.cmp = cases::compare_attention(c, out.data(), ref, cases::attention_tolerance(c.dtype));
  rr.outcome = rr.cmp.pass ? "ok" : "mismatch";
  return rr;
}

bool sticky(const gpu::CudaFailure& f) {
  const auto* e = f.driver ? taxonomy::find_driver(f.code) : taxonomy::find_runtime(f.code);
  return e ? e->sticky : true;
}

json repeats_json(const std::map<std::string, int>& hist, int runs) {
  int failures = 0;
  for (const auto& [k, n] : hist)
    if (k != "ok") failures += n;
  const auto ci = stats::wilson_interval(failures, runs);
  return json{{"runs", runs},
              {"failures", failures},
              {"failure_rate", runs ? static_cast<double>(failures) / runs : 0.0},
              {"ci95_low", ci.low},
              {"ci95_high", ci.high},
              {"histogram", hist}};
}

json bench(gpu::Session& s, const AttentionConfig& c, const ak::Problem& p, const Buffers& b, json line) {
  constexpr int kWarmup = 5, kIters = 30;
  auto ms = ak::time_attention(s, p, b.t, kWarmup, kIters);
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

  const ak::Problem p = problem_of(c);
  const double work = static_cast<double>(c.batch) * c.heads * c.seq_len * c.seq_len * c.head_dim;
  const bool gpu_reference = work > cases::kCpuReferenceWork;
  const bool is_bench = spec.params.value("bench", false);
  int repeat = std::max(1, spec.repeat);
  if (repeat == 1 && spec.params.contains("repeat") && spec.params["repeat"].is_number_integer())
    repeat = std::max(1, spec.params["repeat"].get<int>());
  if (is_bench) repeat = 1;
  const auto seed = spec.params.value("seed", static_cast<unsigned long long>(std::random_device{}()));
  std::mt19937_64 rng(seed);

  json details{{"kernel", ak::kernel_name(p)},
               {"smem_bytes", cases::attention_smem_bytes(c)},
               {"smem_optin", smem_optin},
               {"threads", cases::attention_threads(c)},
               {"grid", {(c.seq_len + c.block_m - 1) / c.block_m, c.heads, c.batch}},
               {"slabs_per_warp", ak::slabs_per_warp(c.block_m, c.warps)},
               {"reference", gpu_reference ? "gpu_fp32" : "cpu_fp64"},
               {"tolerance", cases::attention_tolerance(c.dtype)},
               {"seed", seed}};
  std::map<std::string, int> hist;
  int runs = 0;
  double max_err = 0.0;
  json first_failure = nullptr;
  std::optional<gpu::CudaFailure> error;
  try {
    Buffers b = allocate(s, c, gpu_reference);
    for (int i = 0; i < repeat; ++i) {
      RunResult rr;
      try {
        rr = run_once(s, c, p, b, rng);
      } catch (const gpu::CudaError& e) {
        ++runs;
        ++hist["cuda_error"];
        if (!error) error = e.failure();
        if (sticky(e.failure())) break;  // the context is gone: report the runs so far
        continue;
      }
      ++runs;
      ++hist[rr.outcome];
      max_err = std::max(max_err, std::isfinite(rr.cmp.rel_err) ? rr.cmp.rel_err : 1e300);
      if (rr.outcome != "ok" && first_failure.is_null())
        first_failure = json{{"run", i},
                             {"rel_err", rr.cmp.rel_err},
                             {"non_finite", rr.cmp.non_finite},
                             {"first_bad_row", rr.cmp.first_bad_row}};
    }
    details["max_rel_err"] = max_err;
    if (!first_failure.is_null()) details["first_failure"] = first_failure;
    json line{{"outcome", error ? "cuda_error" : (hist.count("mismatch") ? "mismatch" : "ok")},
              {"repeats", repeats_json(hist, runs)},
              {"details", details}};
    if (error) {
      line["error"] = failure_json(*error);
      line["launch_log"] = launch_log_json(s);
      line["buffers"] = buffers_json(s);
    }
    if (is_bench && !error && hist.count("ok")) line = bench(s, c, p, b, line);
    return line;
  } catch (const gpu::CudaError& e) {
    // Allocation or timing failed outside a verified run.
    json line = cuda_error_line(e.failure(), &s);
    details["max_rel_err"] = max_err;
    line["details"] = details;
    if (runs > 0) line["repeats"] = repeats_json(hist, runs);
    return line;
  }
}

}  // namespace cudadiag::app::child

// Child side of `attention`: validates the configuration against this device and
// prepares the case once (attention::AttentionRunner); every run is verified on the
// device (Q/K/V generated there from the run's seed, the output poisoned, an fp32 device
// reference, the comparison reduced there), a whole batch per wait. Run 0 (and so a
// replay) is also checked against the CPU float64 reference where the size allows.
// With params.bench it times the kernel after the verified runs.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention/attention_config.h"
#include "attention/attention_reference.h"
#include "child_families.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_runner.h"
#include "repeat/series.h"

namespace cudadiag::app::child {
namespace {

namespace at = cudadiag::attention;
using at::AttentionConfig;

at::Problem problem_of(const AttentionConfig& c) {
  at::Problem p;
  p.dtype = c.dtype;
  p.engine = c.engine;
  p.batch = c.batch, p.heads = c.heads, p.seq_len = c.seq_len, p.head_dim = c.head_dim;
  p.causal = c.causal;
  p.block_m = c.block_m, p.block_n = c.block_n, p.warps = c.warps;
  at::Strides* dst[] = {&p.q, &p.k, &p.v, &p.o};
  for (size_t i = 0; i < 4; ++i) *dst[i] = {c.strides[i].batch, c.strides[i].head, c.strides[i].seq};
  p.knobs.misalign_bytes = c.misalign_bytes;
  p.knobs.no_tail_mask = c.no_tail_mask;
  p.knobs.drop_barrier = c.drop_barrier;
  p.knobs.smem_overflow = c.smem_overflow;
  p.knobs.race_window = c.race_window;
  p.knobs.race_rate = c.race_rate;
  return p;
}

json comparison_json(const at::AttentionComparison& r) {
  return json{{"rel_err", r.rel_err},
              {"non_finite", r.non_finite},
              {"first_bad_row", r.first_bad_row},
              {"reference_non_finite", r.ref_non_finite}};
}

Trial trial_of(const at::AttentionComparison& cmp) {
  Trial t;
  t.outcome = cmp.pass ? report::Outcome::ok : report::Outcome::mismatch;
  if (!cmp.pass) {
    t.details["failure"] = comparison_json(cmp);
    t.reason = "relative error " + std::to_string(cmp.rel_err) + " above the tolerance";
    if (cmp.non_finite > 0) t.reason = std::to_string(cmp.non_finite) + " output elements not finite";
    if (cmp.ref_non_finite > 0) t.reason = "the device reference is incomplete";
  }
  return t;
}

int device_attribute(gpu::Session& s, cudaDeviceAttr attr) {
  int device = 0, value = 0;
  CD_CHECK(s, cudaGetDevice(&device), "attribute");
  CD_CHECK(s, cudaDeviceGetAttribute(&value, attr, device), "attribute");
  return value;
}

std::array<size_t, 4> extents_of(const AttentionConfig& c) {
  return {at::tensor_extent_elems(c, 0), at::tensor_extent_elems(c, 1), at::tensor_extent_elems(c, 2),
          at::tensor_extent_elems(c, 3)};
}

class AttentionCase : public CaseRun {
 public:
  explicit AttentionCase(const suite::CaseSpec& spec)
      : config_(at::attention_config_from_json(spec.params)),
        bench_(spec.params.value("bench", false)),
        tolerance_(at::attention_tolerance(config_.dtype)) {
    // Host-decidable reasons first: no CUDA call for a configuration that cannot work.
    if (auto why = at::validate_attention(config_, std::numeric_limits<size_t>::max()); !why.empty())
      throw InvalidConfig(why.front(), json{{"reasons", why}});
    session_ = open_session(spec);
    smem_optin_ = device_attribute(*session_, cudaDevAttrMaxSharedMemoryPerBlockOptin);
    if (auto why = at::validate_attention(config_, static_cast<size_t>(smem_optin_)); !why.empty())
      throw InvalidConfig(why.front(), json{{"reasons", why}, {"smem_optin", smem_optin_}});
    // The wgmma engine is sm_90a machine code: it loads on compute capability 9.0 only.
    const int major = device_attribute(*session_, cudaDevAttrComputeCapabilityMajor);
    const int minor = device_attribute(*session_, cudaDevAttrComputeCapabilityMinor);
    if (config_.engine == at::Engine::wgmma && !(major == 9 && minor == 0))
      throw InvalidConfig("the wgmma engine is sm_90a code; this device is sm_" + std::to_string(major) +
                          std::to_string(minor));
    problem_ = problem_of(config_);
    const double work = static_cast<double>(config_.batch) * config_.heads * config_.seq_len * config_.seq_len *
                        config_.head_dim;
    cpu_check_ = work <= at::kCpuReferenceWork;
    runner_ = std::make_unique<at::AttentionRunner>(*session_, problem_, extents_of(config_), tolerance_,
                                                    repeat::kMaxBatch);
  }

  Trial run(std::uint64_t seed) override { return run_alone(*this, seed); }

  Batch run_batch(const std::vector<std::uint64_t>& seeds) override {
    gpu::BatchResult done = runner_->run(seeds);
    Batch b;
    b.error = std::move(done.error);
    b.trials.reserve(done.counters.size());
    for (const auto& counters : done.counters) {
      const auto cmp = at::judge_attention(at::attention_sums(counters, config_.head_dim), tolerance_);
      max_err_ = std::max(max_err_, std::isfinite(cmp.rel_err) ? cmp.rel_err : 1e300);
      if (cmp.pass) ++verified_;
      b.trials.push_back(trial_of(cmp));
    }
    return b;
  }

  // The CPU float64 check of the run just finished: the kernel's output judged by the
  // same rule, and the device's fp32 reference against the float64 one.
  std::optional<HostCheck> host_check(std::uint64_t /*seed*/, const Trial& device) override {
    if (!cpu_check_) return std::nullopt;
    const auto snap = runner_->snapshot();
    const auto cpu = at::attention_reference_cpu(config_, snap.q.data(), snap.k.data(), snap.v.data());
    const auto kernel = at::compare_attention(config_, snap.o.data(), cpu, tolerance_);
    const double ref_err = at::reference_rel_err(snap.ref, cpu);
    HostCheck hc;
    hc.details = comparison_json(kernel);
    hc.details["device_reference_rel_err"] = ref_err;
    if (ref_err > at::kReferenceAgreement) {
      hc.agrees = false;
      hc.disagreement =
          "the device reference differs from the CPU float64 reference (rel err " + std::to_string(ref_err) + ")";
    } else if (kernel.pass != (device.outcome == report::Outcome::ok)) {
      hc.agrees = false;
      hc.disagreement = "the device check and the CPU float64 check disagree on this run";
    }
    return hc;
  }

  const gpu::Session* session() const override { return session_.get(); }

  json facts() const override {
    return json{{"kernel", at::kernel_name(problem_)},
                {"smem_bytes", at::attention_smem_bytes(config_)},
                {"smem_optin", smem_optin_},
                {"threads", at::attention_threads(config_)},
                {"grid", {(config_.seq_len + config_.block_m - 1) / config_.block_m, config_.heads, config_.batch}},
                {"slabs_per_warp", at::slabs_per_warp(config_.block_m, config_.warps)},
                {"slabs_at_once", at::slabs_at_once(config_.block_m, config_.block_n, config_.warps)},
                {"reference", cpu_check_ ? "gpu_fp32, run 0 also cpu_fp64" : "gpu_fp32"},
                {"tolerance", tolerance_}};
  }

  json summary() override {
    json out{{"max_rel_err", max_err_}};
    if (bench_ && verified_ > 0) out["bench"] = bench();
    return out;
  }

 private:
  json bench() {
    constexpr int kWarmup = 5, kIters = 30;
    auto ms = runner_->time(kWarmup, kIters);
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    return json{{"warmup", kWarmup},
                {"iters", kIters},
                {"median_ms", median},
                {"min_ms", ms.front()},
                {"max_ms", ms.back()},
                {"flops", at::attention_flops(config_)},
                {"tflops", at::attention_flops(config_) / (median * 1e-3) / 1e12}};
  }

  AttentionConfig config_;
  bool bench_ = false;
  double tolerance_ = 0.0;
  std::unique_ptr<gpu::Session> session_;
  int smem_optin_ = 0;
  at::Problem problem_;
  bool cpu_check_ = false;
  std::unique_ptr<at::AttentionRunner> runner_;
  double max_err_ = 0.0;
  int verified_ = 0;
};

}  // namespace

std::unique_ptr<CaseRun> make_attention_run(const suite::CaseSpec& spec) {
  return std::make_unique<AttentionCase>(spec);
}

}  // namespace cudadiag::app::child

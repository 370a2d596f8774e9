// Child side of `attention`: validates the configuration against this device, allocates
// once, and each run draws fresh random inputs, poisons the output with NaN, launches
// the kernel and compares with a reference. With params.bench it times the kernel
// after the verified runs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attention/attention_config.h"
#include "attention/attention_reference.h"
#include "child_families.h"
#include "kernels/attention/attention.h"

namespace cudadiag::app::child {
namespace {

namespace at = cudadiag::attention;
using at::AttentionConfig;

at::Problem problem_of(const AttentionConfig& c) {
  at::Problem p;
  p.dtype = c.dtype == "bf16" ? at::DType::bf16 : at::DType::fp16;
  p.batch = c.batch, p.heads = c.heads, p.seq_len = c.seq_len, p.head_dim = c.head_dim;
  p.causal = c.causal;
  p.block_m = c.block_m, p.block_n = c.block_n, p.warps = c.warps;
  at::Strides* dst[] = {&p.q, &p.k, &p.v, &p.o};
  for (size_t i = 0; i < 4; ++i) *dst[i] = {c.strides[i].batch, c.strides[i].head, c.strides[i].seq};
  p.knobs = {c.misalign_bytes, c.no_tail_mask, c.drop_barrier, c.smem_overflow};
  return p;
}

// Fresh uniform [-1, 1] inputs, rounded to the dtype; returns them as floats (the
// values the kernel sees) for the CPU reference.
std::vector<float> upload_random(gpu::Session& s, at::DType dt, void* dst, size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(n);
  for (auto& e : x) e = u(rng);
  std::vector<uint16_t> bits(n);
  at::to_device_format(dt, x.data(), bits.data(), n);
  at::from_device_format(dt, bits.data(), x.data(), n);
  s.copy_to_device(dst, bits.data(), n * 2);
  return x;
}

class AttentionRun : public CaseRun {
 public:
  explicit AttentionRun(const runner::CaseSpec& spec)
      : config_(at::attention_config_from_json(spec.params)), bench_(spec.params.value("bench", false)) {
    // Host-decidable reasons first: no CUDA call for a configuration that cannot work.
    if (auto why = at::validate_attention(config_, std::numeric_limits<size_t>::max()); !why.empty())
      throw InvalidConfig(why.front(), json{{"reasons", why}});
    session_ = open_session(spec);
    int device = 0;
    CD_CHECK(*session_, cudaGetDevice(&device), "attribute");
    CD_CHECK(*session_, cudaDeviceGetAttribute(&smem_optin_, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "attribute");
    if (auto why = at::validate_attention(config_, static_cast<size_t>(smem_optin_)); !why.empty())
      throw InvalidConfig(why.front(), json{{"reasons", why}, {"smem_optin", smem_optin_}});
    problem_ = problem_of(config_);
    const double work = static_cast<double>(config_.batch) * config_.heads * config_.seq_len * config_.seq_len *
                        config_.head_dim;
    gpu_reference_ = work > at::kCpuReferenceWork;
    allocate();
  }

  Trial run(std::uint64_t seed) override {
    std::mt19937_64 rng(seed);
    const auto& c = config_;
    const auto q = upload_random(*session_, problem_.dtype, const_cast<void*>(t_.q), elems_[0], rng);
    const auto k = upload_random(*session_, problem_.dtype, const_cast<void*>(t_.k), elems_[1], rng);
    const auto v = upload_random(*session_, problem_.dtype, const_cast<void*>(t_.v), elems_[2], rng);
    // 0xFFFF is NaN in both fp16 and bf16: any output element not written stays NaN.
    session_->memset(t_.o, 0xFF, elems_[3] * 2);
    at::launch_attention(*session_, problem_, t_);
    session_->synchronize();

    std::vector<uint16_t> bits(elems_[3]);
    session_->copy_to_host(bits.data(), t_.o, bits.size() * 2);
    std::vector<float> out(bits.size());
    at::from_device_format(problem_.dtype, bits.data(), out.data(), bits.size());

    std::vector<double> ref;
    if (ref_) {
      const size_t n = static_cast<size_t>(c.batch) * c.heads * c.seq_len * c.head_dim;
      session_->memset(ref_, 0xFF, n * sizeof(float));
      at::launch_reference(*session_, problem_, t_, ref_);
      session_->synchronize();
      std::vector<float> r(n);
      session_->copy_to_host(r.data(), ref_, n * sizeof(float));
      ref.assign(r.begin(), r.end());
    } else {
      ref = at::attention_reference_cpu(c, q.data(), k.data(), v.data());
    }
    const auto cmp = at::compare_attention(c, out.data(), ref, at::attention_tolerance(c.dtype));
    max_err_ = std::max(max_err_, std::isfinite(cmp.rel_err) ? cmp.rel_err : 1e300);
    Trial t;
    t.outcome = cmp.pass ? report::Outcome::ok : report::Outcome::mismatch;
    if (!cmp.pass) {
      t.details["failure"] = json{{"rel_err", cmp.rel_err}, {"non_finite", cmp.non_finite},
                                  {"first_bad_row", cmp.first_bad_row}};
      t.reason = "relative error " + std::to_string(cmp.rel_err) + " above the tolerance";
    } else {
      ++verified_;
    }
    return t;
  }

  const gpu::Session* session() const override { return session_.get(); }

  json facts() const override {
    return json{{"kernel", at::kernel_name(problem_)},
                {"smem_bytes", at::attention_smem_bytes(config_)},
                {"smem_optin", smem_optin_},
                {"threads", at::attention_threads(config_)},
                {"grid", {(config_.seq_len + config_.block_m - 1) / config_.block_m, config_.heads, config_.batch}},
                {"slabs_per_warp", at::slabs_per_warp(config_.block_m, config_.warps)},
                {"reference", gpu_reference_ ? "gpu_fp32" : "cpu_fp64"},
                {"tolerance", at::attention_tolerance(config_.dtype)}};
  }

  json summary() override {
    json out{{"max_rel_err", max_err_}};
    if (bench_ && verified_ > 0) out["bench"] = bench();
    return out;
  }

 private:
  // Device buffers sized to the exact extent, so that a fenced buffer faults on the
  // first element past it; the misalign knob adds its offset as slack.
  void allocate() {
    void* raw[4] = {};
    for (int i = 0; i < 4; ++i) {
      elems_[i] = at::tensor_extent_elems(config_, i);
      const size_t slack = i < 3 ? static_cast<size_t>(config_.misalign_bytes) : 0;
      raw[i] = session_->alloc(at::kTensorNames[static_cast<size_t>(i)], elems_[i] * 2 + slack);
    }
    auto shifted = [&](int i) { return static_cast<char*>(raw[i]) + config_.misalign_bytes; };
    t_ = {shifted(0), shifted(1), shifted(2), raw[3]};
    if (gpu_reference_)
      ref_ = session_->alloc_n<float>(
          "reference_out", static_cast<size_t>(config_.batch) * config_.heads * config_.seq_len * config_.head_dim);
  }

  json bench() {
    constexpr int kWarmup = 5, kIters = 30;
    auto ms = at::time_attention(*session_, problem_, t_, kWarmup, kIters);
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
  std::unique_ptr<gpu::Session> session_;
  int smem_optin_ = 0;
  at::Problem problem_;
  bool gpu_reference_ = false;
  size_t elems_[4] = {};
  at::DeviceTensors t_;
  float* ref_ = nullptr;
  double max_err_ = 0.0;
  int verified_ = 0;
};

}  // namespace

std::unique_ptr<CaseRun> make_attention_run(const runner::CaseSpec& spec) {
  return std::make_unique<AttentionRun>(spec);
}

}  // namespace cudadiag::app::child

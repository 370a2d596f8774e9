// AttentionRunner: one run = fill (seeded inputs, poisoned outputs) -> kernel under test
// -> fp32 reference -> device check -> counters to the host.
#include <string>

#include "kernels/attention/attention_check.h"
#include "kernels/attention/attention_runner.h"
#include "kernels/runtime/device_fill.h"

namespace cudadiag::attention {

AttentionRunner::AttentionRunner(gpu::Session& s, const Problem& p, const std::array<size_t, 4>& extents,
                                 double tolerance, int max_batch)
    : s_(s), p_(p), extents_(extents), tolerance_(tolerance) {
  // Helpers first: the case's own buffers come last, so that an overrun of them lands
  // outside every allocation (what memcheck can see).
  slots_ = std::make_unique<gpu::RunSlots>(s, max_batch);
  ref_elems_ = static_cast<size_t>(p.batch) * p.heads * p.seq_len * p.head_dim;
  ref_ = s.alloc_n<float>("reference_out", ref_elems_);
  static const char* const kNames[4] = {"q", "k", "v", "o"};
  void* raw[4] = {};
  for (int i = 0; i < 4; ++i) {
    const size_t slack = i < 3 ? static_cast<size_t>(p.knobs.misalign_bytes) : 0;
    raw[i] = s.alloc(kNames[i], extents[static_cast<size_t>(i)] * kElemBytes + slack);
  }
  auto shifted = [&](int i) { return static_cast<char*>(raw[i]) + p.knobs.misalign_bytes; };
  t_ = {shifted(0), shifted(1), shifted(2), raw[3]};
  launch_ = prepare_launch(s, p);
}

AttentionRunner::~AttentionRunner() = default;

gpu::BatchResult AttentionRunner::run(const std::vector<uint64_t>& seeds) {
  const gpu::FillKind in_kind = p_.dtype == DType::fp16 ? gpu::FillKind::uniform_f16 : gpu::FillKind::uniform_bf16;
  return slots_->run(static_cast<int>(seeds.size()), [&](int i) {
    const uint64_t seed = seeds[static_cast<size_t>(i)];
    gpu::RunCounters* slot = slots_->device(i);
    gpu::FillJob job;
    job.add({const_cast<void*>(t_.q), extents_[0], in_kind, kStreamQ, 1.0f});
    job.add({const_cast<void*>(t_.k), extents_[1], in_kind, kStreamK, 1.0f});
    job.add({const_cast<void*>(t_.v), extents_[2], in_kind, kStreamV, 1.0f});
    job.add({t_.o, extents_[3], gpu::FillKind::poison16, 0, 1.0f});  // NaN in fp16 and bf16
    job.add({ref_, ref_elems_, gpu::FillKind::poison32, 0, 1.0f});
    gpu::launch_fill(s_, job, seed, slot);
    launch_prepared(s_, launch_, p_, t_, seed);
    launch_reference(s_, p_, t_, ref_);
    launch_check(s_, p_, t_, ref_, tolerance_, slot);
  });
}

AttentionRunner::Snapshot AttentionRunner::snapshot() {
  Snapshot snap;
  std::vector<float>* dst[4] = {&snap.q, &snap.k, &snap.v, &snap.o};
  const void* src[4] = {t_.q, t_.k, t_.v, t_.o};
  for (size_t i = 0; i < 4; ++i) {
    std::vector<uint16_t> bits(extents_[i]);
    s_.copy_to_host(bits.data(), src[i], bits.size() * kElemBytes);
    dst[i]->resize(bits.size());
    from_device_format(p_.dtype, bits.data(), dst[i]->data(), bits.size());
  }
  snap.ref.resize(ref_elems_);
  s_.copy_to_host(snap.ref.data(), ref_, ref_elems_ * sizeof(float));
  return snap;
}

std::vector<float> AttentionRunner::time(int warmup, int iters) { return time_attention(s_, p_, t_, warmup, iters); }

}  // namespace cudadiag::attention

// The reproducer catalog and FaultRunner: prepare once, then per run fresh inputs from
// the seed, a poisoned output, the reproducer and the device check.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "kernels/faults/fault_support.h"

namespace cudadiag::faults {
namespace {

// Catalog order.
const ReproducerOps* const kCatalog[] = {
    &kOobWrite, &kOobRead, &kUnderrunWrite, &kUnderrunRead, &kMisalignedVectorLoad,
    &kDeviceAssert, &kUseAfterFree, &kTrap, &kHang, &kTooManyThreads,
    &kSmemOverLimit, &kOutOfMemory, &kTooManyResources, &kOkControl,
};

const ReproducerOps& find_ops(const std::string& name) {
  for (const auto* ops : kCatalog)
    if (name == ops->name) return *ops;
  throw std::invalid_argument("unknown fault reproducer '" + name + "'");
}

float expected_at(const FaultContext& c, uint64_t seed, long long i) {
  return transform(fault_input(seed, i + c.shift));
}

std::string bad_message(long long i, float got, float want) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "out[%lld]: got %.9g, expected %.9g", i, static_cast<double>(got),
                static_cast<double>(want));
  return buf;
}

uint32_t bits_of(float x) {
  uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
float float_of(uint32_t b) {
  float x = 0;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

}  // namespace

const std::vector<std::string>& reproducer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto* ops : kCatalog) v.emplace_back(ops->name);
    return v;
  }();
  return names;
}

FaultRunner::FaultRunner(gpu::Session& s, const FaultParams& p, int max_batch)
    : ctx_(std::make_unique<FaultContext>(s, p)), ops_(&find_ops(p.reproducer)) {
  ctx_->max_batch = max_batch;
  ops_->prepare(*ctx_);
  ctx_->make_slots();
}

FaultRunner::~FaultRunner() = default;

gpu::BatchResult FaultRunner::run(const std::vector<uint64_t>& seeds) {
  FaultContext& c = *ctx_;
  return c.slots->run(static_cast<int>(seeds.size()), [&](int i) {
    gpu::RunCounters* slot = c.slots->device(i);
    gpu::FillJob job;
    if (c.in) job.add({c.in, static_cast<unsigned long long>(c.in_elems), gpu::FillKind::uniform_f32, 0, kInputScale});
    if (c.out) job.add({c.out, static_cast<unsigned long long>(c.out_elems), gpu::FillKind::poison32, 0, 1.0f});
    gpu::launch_fill(c.s, job, seeds[static_cast<size_t>(i)], slot);
    ops_->launch(c);
    if (c.checks) launch_check_transform(c, seeds[static_cast<size_t>(i)], slot);
  });
}

FaultCheck FaultRunner::describe(const gpu::RunCounters& counters, uint64_t seed) const {
  FaultCheck r;
  r.checked = static_cast<long long>(counters.checked);
  r.mismatches = static_cast<long long>(counters.mismatches);
  const long long i = gpu::first_bad_index(counters);
  if (i >= 0) r.first_bad = bad_message(i, float_of(gpu::first_bad_bits(counters)), expected_at(*ctx_, seed, i));
  return r;
}

FaultCheck FaultRunner::host_check(uint64_t seed) {
  const FaultContext& c = *ctx_;
  FaultCheck r;
  if (!c.checks) return r;
  std::vector<float> got(static_cast<size_t>(c.out_elems));
  c.s.copy_to_host(got.data(), c.out, got.size() * sizeof(float));
  for (long long i = c.first; i < c.last; ++i) {
    const float want = expected_at(c, seed, i);
    const float g = got[static_cast<size_t>(i)];
    ++r.checked;
    if (bits_of(g) != bits_of(want)) {
      if (r.mismatches++ == 0) r.first_bad = bad_message(i, g, want);
    }
  }
  return r;
}

const std::vector<std::pair<std::string, long long>>& FaultRunner::facts() const { return ctx_->facts; }

}  // namespace cudadiag::faults

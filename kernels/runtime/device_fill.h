#pragma once
// Fresh inputs and poisoned outputs made on the device: one launch fills every buffer
// of a run from the run's seed (counter_rng.h: each element a pure function of seed,
// stream and index), poisons the outputs and resets the run's counters. Plain C++ header.
#include <cstdint>

#include "kernels/runtime/counter_rng.h"
#include "kernels/runtime/gpu_runtime.h"
#include "kernels/runtime/run_counters.h"

namespace cudadiag::gpu {

enum class FillKind : uint32_t {
  uniform_f16,   // scale * U[-1, 1) rounded to fp16 (nearest even)
  uniform_bf16,  // the same rounded to bf16
  uniform_f32,   // scale * U[-1, 1), exact; a zero becomes 1 (never zeros)
  poison16,      // 0xFFFF: NaN in fp16 and bf16
  poison32,      // 0xFFFFFFFF: NaN in fp32
};

struct FillSegment {
  void* ptr = nullptr;
  unsigned long long elems = 0;
  FillKind kind = FillKind::poison16;
  uint32_t stream = 0;  // random stream: one per tensor, so tensors differ
  float scale = 1.0f;
};

inline constexpr int kMaxFillSegments = 6;

struct FillJob {
  FillSegment seg[kMaxFillSegments];
  int count = 0;
  // Throws std::length_error past kMaxFillSegments.
  void add(const FillSegment& s);
};

// One launch on the default stream: every segment filled, *slot reset to a fresh
// RunCounters (slot may be null). Checked launch; not synchronised; not recorded in the
// launch log (only the kernels under test are).
void launch_fill(Session& s, const FillJob& job, uint64_t seed, RunCounters* slot);

// Element i of a uniform_f32 segment (host and device agree bit for bit).
CUDADIAG_HD float fill_value_f32(uint64_t seed, uint32_t stream, uint64_t i, float scale) {
  const float x = scale * rng::uniform_pm1(rng::element_bits(seed, stream, i));
  return x == 0.0f ? 1.0f : x;
}

}  // namespace cudadiag::gpu

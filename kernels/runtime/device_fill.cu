// The fill kernel: fresh seeded inputs, poisoned outputs and a reset counter slot in
// one launch per run.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "kernels/runtime/device_fill.h"

namespace cudadiag::gpu {
namespace {

struct FillArgs {
  FillSegment seg[kMaxFillSegments];
  unsigned long long end[kMaxFillSegments];  // exclusive prefix ends of the segments
  int count;
  uint64_t seed;
  RunCounters* slot;
};

// 16-bit element i of a buffer that may start at an odd address (the attention kernel's
// misalign knob shifts its inputs by any byte count): byte stores there, never a fault.
__device__ __forceinline__ void store16(void* base, unsigned long long i, uint16_t bits) {
  if (reinterpret_cast<uintptr_t>(base) & 1) {
    unsigned char* p = static_cast<unsigned char*>(base) + 2 * i;
    p[0] = static_cast<unsigned char>(bits & 0xFF);
    p[1] = static_cast<unsigned char>(bits >> 8);
  } else {
    static_cast<uint16_t*>(base)[i] = bits;
  }
}

__device__ void fill_one(const FillSegment& s, unsigned long long i, uint64_t seed) {
  switch (s.kind) {
    case FillKind::uniform_f16: {
      const float x = s.scale * rng::uniform_pm1(rng::element_bits(seed, s.stream, i));
      store16(s.ptr, i, __half_as_ushort(__float2half_rn(x)));
      break;
    }
    case FillKind::uniform_bf16: {
      const float x = s.scale * rng::uniform_pm1(rng::element_bits(seed, s.stream, i));
      store16(s.ptr, i, __bfloat16_as_ushort(__float2bfloat16_rn(x)));
      break;
    }
    case FillKind::uniform_f32:
      static_cast<float*>(s.ptr)[i] = fill_value_f32(seed, s.stream, i, s.scale);
      break;
    case FillKind::poison16:
      store16(s.ptr, i, 0xFFFFu);
      break;
    case FillKind::poison32:
      static_cast<uint32_t*>(s.ptr)[i] = 0xFFFFFFFFu;
      break;
  }
}

__global__ void fill_kernel(const FillArgs a) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && a.slot) {
    RunCounters c{};
    c.arrived = 1;  // seen by the host only if the copy queued after the check ran
    *a.slot = c;
  }
  const unsigned long long total = a.count ? a.end[a.count - 1] : 0;
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long g = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; g < total;
       g += step) {
    int k = 0;
    while (g >= a.end[k]) ++k;
    const unsigned long long i = g - (k ? a.end[k - 1] : 0);
    fill_one(a.seg[k], i, a.seed);
  }
}

}  // namespace

void FillJob::add(const FillSegment& s) {
  if (count >= kMaxFillSegments) throw std::length_error("FillJob: more than kMaxFillSegments segments");
  seg[count++] = s;
}

void launch_fill(Session& s, const FillJob& job, uint64_t seed, RunCounters* slot) {
  FillArgs a{};
  unsigned long long total = 0;
  for (int k = 0; k < job.count; ++k) {
    a.seg[k] = job.seg[k];
    total += job.seg[k].elems;
    a.end[k] = total;
  }
  a.count = job.count;
  a.seed = seed;
  a.slot = slot;
  constexpr unsigned kThreads = 256;
  constexpr unsigned long long kMaxBlocks = 2048;  // grid-stride beyond this
  unsigned long long blocks = (total + kThreads - 1) / kThreads;
  if (blocks == 0) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  fill_kernel<<<static_cast<unsigned>(blocks), kThreads>>>(a);
  CD_CHECK_LAUNCH(s);
}

}  // namespace cudadiag::gpu

// Memory reproducers: overruns, underruns, a misaligned vector load, a use after free,
// and the correct control kernel. Each writes out[i] = transform(in[...]) with one
// deliberate indexing bug.
#include <algorithm>

#include "kernels/faults/fault_support.h"

namespace cudadiag::faults {
namespace {

__global__ void ok_control_kernel(const float* in, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = transform(in[i]);
}

// Bug: the bound is n + k, so the last k threads write past the end of out.
__global__ void oob_write_kernel(const float* in, float* out, long long n, long long k) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n + k) out[i] = i < n ? transform(in[i]) : 0.0f;
}

// Bug: a window shifted by k, so the last k threads read past the end of in.
__global__ void oob_read_kernel(const float* in, float* out, long long n, long long k) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = transform(in[i + k]);
}

// Bug: the destination index is shifted by -k, so the first k threads write before out.
__global__ void underrun_write_kernel(const float* in, float* out, long long n, long long k) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i - k] = transform(in[i]);
}

// Bug: the source index is shifted by -k, so the first k threads read before in.
__global__ void underrun_read_kernel(const float* in, float* out, long long n, long long k) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = transform(in[i - k]);
}

// Bug: a 16-byte vector load from a pointer that is only 4-byte aligned.
__global__ void misaligned_vector_load_kernel(const char* in_bytes, float* out, long long quads) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < quads) {
    const float4 v = reinterpret_cast<const float4*>(in_bytes)[i];
    out[i] = v.x + v.y + v.z + v.w;
  }
}

// Bug: stale is a buffer freed before the launch.
__global__ void use_after_free_kernel(const float* in, float* stale, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) {
    stale[i] = in[i];
    out[i] = transform(stale[i]);
  }
}

void prepare_in_first(FaultContext& c) { alloc_in_out(c, FirstAlloc::in); }
void prepare_out_first(FaultContext& c) { alloc_in_out(c, FirstAlloc::out); }

void prepare_ok_control(FaultContext& c) {
  prepare_in_first(c);
  c.check_range(0, c.p.elements, 0);
}
void launch_ok_control(FaultContext& c) {
  const long long n = c.p.elements;
  c.s.record_launch("ok_control_kernel", dim3(blocks_for(n)), dim3(kThreads), 0, {c.in, c.out});
  ok_control_kernel<<<blocks_for(n), kThreads>>>(c.in, c.out, n);
  CD_CHECK_LAUNCH(c.s);
}

void prepare_oob_write(FaultContext& c) {
  prepare_in_first(c);
  c.check_range(0, c.p.elements, 0);
}
void launch_oob_write(FaultContext& c) {
  const long long n = c.p.elements;
  const unsigned blocks = blocks_for(n + c.p.k);
  c.s.record_launch("oob_write_kernel", dim3(blocks), dim3(kThreads), 0, {c.in, c.out});
  oob_write_kernel<<<blocks, kThreads>>>(c.in, c.out, n, c.p.k);
  CD_CHECK_LAUNCH(c.s);
}

// The last k outputs come from whatever lies past the end: not comparable.
void prepare_oob_read(FaultContext& c) {
  prepare_out_first(c);
  c.check_range(0, c.p.elements - c.p.k, c.p.k);
}
void launch_oob_read(FaultContext& c) {
  const long long n = c.p.elements;
  c.s.record_launch("oob_read_kernel", dim3(blocks_for(n)), dim3(kThreads), 0, {c.in, c.out});
  oob_read_kernel<<<blocks_for(n), kThreads>>>(c.in, c.out, n, c.p.k);
  CD_CHECK_LAUNCH(c.s);
}

// out[j] = transform(in[j + k]) for j < n - k; the last k outputs are never written.
void prepare_underrun_write(FaultContext& c) {
  prepare_out_first(c);
  c.check_range(0, c.p.elements - c.p.k, c.p.k);
}
void launch_underrun_write(FaultContext& c) {
  const long long n = c.p.elements;
  c.s.record_launch("underrun_write_kernel", dim3(blocks_for(n)), dim3(kThreads), 0, {c.in, c.out});
  underrun_write_kernel<<<blocks_for(n), kThreads>>>(c.in, c.out, n, c.p.k);
  CD_CHECK_LAUNCH(c.s);
}

// The first k outputs come from whatever lies before the start: not comparable.
void prepare_underrun_read(FaultContext& c) {
  prepare_in_first(c);
  c.check_range(c.p.k, c.p.elements, -c.p.k);
}
void launch_underrun_read(FaultContext& c) {
  const long long n = c.p.elements;
  c.s.record_launch("underrun_read_kernel", dim3(blocks_for(n)), dim3(kThreads), 0, {c.in, c.out});
  underrun_read_kernel<<<blocks_for(n), kThreads>>>(c.in, c.out, n, c.p.k);
  CD_CHECK_LAUNCH(c.s);
}

// Nothing to compare: hardware without the alignment rule would be the finding.
void prepare_misaligned(FaultContext& c) {
  prepare_in_first(c);
  c.facts.push_back({"offset_bytes", c.p.offset_bytes});
}
void launch_misaligned(FaultContext& c) {
  // One quad fewer than the buffer holds, so the shifted loads stay inside it: the only
  // fault left is the alignment.
  const long long quads = c.p.elements / 4 - 1;
  const char* shifted = reinterpret_cast<const char*>(c.in) + c.p.offset_bytes;
  c.s.record_launch("misaligned_vector_load_kernel", dim3(blocks_for(quads)), dim3(kThreads), 0, {c.in, c.out});
  misaligned_vector_load_kernel<<<blocks_for(quads), kThreads>>>(shifted, c.out, quads);
  CD_CHECK_LAUNCH(c.s);
}

void prepare_use_after_free(FaultContext& c) {
  prepare_in_first(c);
  // 4 MiB at least: a whole allocation of its own for cudaMalloc, so that a driver which
  // returns freed pages unmaps it. Freed once here: every run writes through the pointer.
  const long long stale_elems = std::max<long long>(c.p.elements, 1ll << 20);
  c.stale = c.s.alloc_n<float>("stale", static_cast<size_t>(stale_elems));
  c.s.synchronize();
  c.s.free(c.stale);
  c.check_range(0, c.p.elements, 0);
}
void launch_use_after_free(FaultContext& c) {
  const long long n = c.p.elements;
  c.s.record_launch("use_after_free_kernel", dim3(blocks_for(n)), dim3(kThreads), 0, {c.in, c.stale, c.out});
  use_after_free_kernel<<<blocks_for(n), kThreads>>>(c.in, c.stale, c.out, n);
  CD_CHECK_LAUNCH(c.s);
}

}  // namespace

void alloc_in_out(FaultContext& c, FirstAlloc first) {
  const auto n = static_cast<size_t>(c.p.elements);
  if (first == FirstAlloc::in) {
    c.in = c.s.alloc_n<float>("in", n);
    c.make_slots();
    c.out = c.s.alloc_n<float>("out", n);
  } else {
    c.out = c.s.alloc_n<float>("out", n);
    c.make_slots();
    c.in = c.s.alloc_n<float>("in", n);
  }
  c.in_elems = c.out_elems = c.p.elements;
}

const ReproducerOps kOkControl{"ok-control", prepare_ok_control, launch_ok_control};
const ReproducerOps kOobWrite{"oob-write", prepare_oob_write, launch_oob_write};
const ReproducerOps kOobRead{"oob-read", prepare_oob_read, launch_oob_read};
const ReproducerOps kUnderrunWrite{"underrun-write", prepare_underrun_write, launch_underrun_write};
const ReproducerOps kUnderrunRead{"underrun-read", prepare_underrun_read, launch_underrun_read};
const ReproducerOps kMisalignedVectorLoad{"misaligned-vector-load", prepare_misaligned, launch_misaligned};
const ReproducerOps kUseAfterFree{"use-after-free", prepare_use_after_free, launch_use_after_free};

}  // namespace cudadiag::faults

// Memory reproducers: overruns, underruns, a misaligned vector load, a use after free,
// and the correct control kernel. Each writes out[i] = in[...] * 2 + 1 (exact in fp32,
// so the host reference is bit-exact) with one deliberate indexing bug.
#include <vector>

#include "kernels/faults/fault_support.h"

namespace cudadiag::faults {
namespace {

__device__ __forceinline__ float transform(float x) { return x * 2.0f + 1.0f; }
float host_transform(float x) { return x * 2.0f + 1.0f; }

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

struct InOut {
  float* in = nullptr;
  float* out = nullptr;
  std::vector<float> host_in;
};

// Which buffer is allocated first. Small cudaMallocs are packed back to back (`direct`
// gave in at [0x..800000, 0x..804000) and out right after it on an H100), and
// compute-sanitizer's memcheck flags only addresses outside every allocation: an overrun
// of the first buffer lands in the second and is missed. So a reproducer allocates the
// buffer it overruns last, and the one it underruns first.
enum class FirstAlloc { in, out };

// in with fresh random data, out poisoned (0xFF bytes: a NaN that never compares equal).
InOut make_in_out(gpu::Session& s, const FaultParams& p, FirstAlloc first = FirstAlloc::in) {
  InOut io;
  io.host_in = random_floats(p.elements, p.seed);
  const auto n = static_cast<size_t>(p.elements);
  if (first == FirstAlloc::in) {
    io.in = s.alloc_n<float>("in", n);
    io.out = s.alloc_n<float>("out", n);
  } else {
    io.out = s.alloc_n<float>("out", n);
    io.in = s.alloc_n<float>("in", n);
  }
  s.copy_to_device(io.in, io.host_in.data(), io.host_in.size() * sizeof(float));
  s.memset(io.out, 0xFF, io.host_in.size() * sizeof(float));
  return io;
}

std::vector<float> read_out(gpu::Session& s, const InOut& io, long long n) {
  std::vector<float> got(static_cast<size_t>(n));
  s.copy_to_host(got.data(), io.out, got.size() * sizeof(float));
  return got;
}

}  // namespace

FaultRun run_ok_control(gpu::Session& s, const FaultParams& p) {
  const InOut io = make_in_out(s, p);
  s.record_launch("ok_control_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), 0, {io.in, io.out});
  ok_control_kernel<<<blocks_for(p.elements), kThreads>>>(io.in, io.out, p.elements);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  compare_range(run, read_out(s, io, p.elements), 0, p.elements,
                [&](long long i) { return host_transform(io.host_in[static_cast<size_t>(i)]); });
  return run;
}

FaultRun run_oob_write(gpu::Session& s, const FaultParams& p) {
  const InOut io = make_in_out(s, p);
  const unsigned blocks = blocks_for(p.elements + p.k);
  s.record_launch("oob_write_kernel", dim3(blocks), dim3(kThreads), 0, {io.in, io.out});
  oob_write_kernel<<<blocks, kThreads>>>(io.in, io.out, p.elements, p.k);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  compare_range(run, read_out(s, io, p.elements), 0, p.elements,
                [&](long long i) { return host_transform(io.host_in[static_cast<size_t>(i)]); });
  return run;
}

FaultRun run_oob_read(gpu::Session& s, const FaultParams& p) {
  const InOut io = make_in_out(s, p, FirstAlloc::out);
  s.record_launch("oob_read_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), 0, {io.in, io.out});
  oob_read_kernel<<<blocks_for(p.elements), kThreads>>>(io.in, io.out, p.elements, p.k);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  // The last k outputs come from whatever lies past the end: not comparable.
  compare_range(run, read_out(s, io, p.elements), 0, p.elements - p.k,
                [&](long long i) { return host_transform(io.host_in[static_cast<size_t>(i + p.k)]); });
  return run;
}

FaultRun run_underrun_write(gpu::Session& s, const FaultParams& p) {
  const InOut io = make_in_out(s, p, FirstAlloc::out);
  s.record_launch("underrun_write_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), 0, {io.in, io.out});
  underrun_write_kernel<<<blocks_for(p.elements), kThreads>>>(io.in, io.out, p.elements, p.k);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  // out[j] = in[j + k] for j < n - k; the last k outputs are never written.
  compare_range(run, read_out(s, io, p.elements), 0, p.elements - p.k,
                [&](long long j) { return host_transform(io.host_in[static_cast<size_t>(j + p.k)]); });
  return run;
}

FaultRun run_underrun_read(gpu::Session& s, const FaultParams& p) {
  const InOut io = make_in_out(s, p);
  s.record_launch("underrun_read_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), 0, {io.in, io.out});
  underrun_read_kernel<<<blocks_for(p.elements), kThreads>>>(io.in, io.out, p.elements, p.k);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  // The first k outputs come from whatever lies before the start: not comparable.
  compare_range(run, read_out(s, io, p.elements), p.k, p.elements,
                [&](long long i) { return host_transform(io.host_in[static_cast<size_t>(i - p.k)]); });
  return run;
}

FaultRun run_misaligned_vector_load(gpu::Session& s, const FaultParams& p) {
  const InOut io = make_in_out(s, p);
  // One quad fewer than the buffer holds, so the shifted loads stay inside it: the only
  // fault left is the alignment.
  const long long quads = p.elements / 4 - 1;
  const char* shifted = reinterpret_cast<const char*>(io.in) + p.offset_bytes;
  s.record_launch("misaligned_vector_load_kernel", dim3(blocks_for(quads)), dim3(kThreads), 0, {io.in, io.out});
  misaligned_vector_load_kernel<<<blocks_for(quads), kThreads>>>(shifted, io.out, quads);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;  // nothing to compare: hardware without the alignment rule would be the finding
  run.facts.push_back({"offset_bytes", p.offset_bytes});
  return run;
}

FaultRun run_use_after_free(gpu::Session& s, const FaultParams& p) {
  const InOut io = make_in_out(s, p);
  // 4 MiB at least: a whole allocation of its own for cudaMalloc, so that a driver which
  // returns freed pages unmaps it.
  const long long stale_elems = std::max<long long>(p.elements, 1ll << 20);
  float* stale = s.alloc_n<float>("stale", static_cast<size_t>(stale_elems));
  s.synchronize();
  s.free(stale);
  s.record_launch("use_after_free_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), 0, {io.in, stale, io.out});
  use_after_free_kernel<<<blocks_for(p.elements), kThreads>>>(io.in, stale, io.out, p.elements);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  compare_range(run, read_out(s, io, p.elements), 0, p.elements,
                [&](long long i) { return host_transform(io.host_in[static_cast<size_t>(i)]); });
  return run;
}

}  // namespace cudadiag::faults

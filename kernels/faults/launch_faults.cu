// Reproducers rejected at launch or allocation (not sticky: the context survives):
// too many threads per block, dynamic shared memory above the opt-in limit, out of
// memory, and a register-hungry kernel launched with 1024 threads.
#include <vector>

#include "kernels/faults/fault_support.h"

namespace cudadiag::faults {
namespace {

__global__ void copy_kernel(const float* in, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void dynamic_smem_kernel(const float* in, float* out, long long n) {
  extern __shared__ float tile[];
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

// 128 values live at once (each update reads its neighbour's previous value), and no
// __launch_bounds__: the compiler keeps them in registers, well above the 64 per thread
// that a 1024-thread block can have (ptxas -v reports ~140 on sm_90).
constexpr int kLive = 128;
__global__ void register_hungry_kernel(const float* in, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float acc[kLive];
#pragma unroll
  for (int j = 0; j < kLive; ++j) acc[j] = in[(i + j) % n];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int j = 0; j < kLive; ++j) acc[j] = acc[j] * acc[(j + 1) % kLive] + 1.0f;
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kLive; ++j) sum += acc[j] * static_cast<float>(j + 1);
  out[i] = sum;
}

struct Pair {
  float* in = nullptr;
  float* out = nullptr;
};

Pair make_pair_buffers(gpu::Session& s, const FaultParams& p) {
  const auto host_in = random_floats(p.elements, p.seed);
  Pair b;
  b.in = s.alloc_n<float>("in", host_in.size());
  b.out = s.alloc_n<float>("out", host_in.size());
  s.copy_to_device(b.in, host_in.data(), host_in.size() * sizeof(float));
  s.memset(b.out, 0xFF, host_in.size() * sizeof(float));
  return b;
}

}  // namespace

FaultRun run_too_many_threads(gpu::Session& s, const FaultParams& p) {
  const Pair b = make_pair_buffers(s, p);
  constexpr unsigned kTooMany = 2048;  // every CUDA GPU allows at most 1024 per block
  s.record_launch("copy_kernel", dim3(1), dim3(kTooMany), 0, {b.in, b.out});
  copy_kernel<<<1, kTooMany>>>(b.in, b.out, p.elements);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  run.facts.push_back({"threads_per_block", kTooMany});
  return run;
}

FaultRun run_smem_over_limit(gpu::Session& s, const FaultParams& p) {
  const Pair b = make_pair_buffers(s, p);
  int optin = 0;
  CD_CHECK(s, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, s.device()), "attribute");
  // Opting in up to the limit is legal; the launch then asks for 1 KiB more.
  CD_CHECK(s, cudaFuncSetAttribute(dynamic_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin),
           "attribute");
  const size_t requested = static_cast<size_t>(optin) + 1024;
  s.record_launch("dynamic_smem_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), requested, {b.in, b.out});
  dynamic_smem_kernel<<<blocks_for(p.elements), kThreads, requested>>>(b.in, b.out, p.elements);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  run.facts.push_back({"smem_optin_bytes", optin});
  run.facts.push_back({"smem_requested_bytes", static_cast<long long>(requested)});
  return run;
}

FaultRun run_out_of_memory(gpu::Session& s, const FaultParams&) {
  size_t free_bytes = 0, total_bytes = 0;
  CD_CHECK(s, cudaMemGetInfo(&free_bytes, &total_bytes), "attribute");
  // Twice the device's memory: no allocator can satisfy it, whatever is free.
  s.alloc("huge", 2 * total_bytes);
  FaultRun run;
  run.facts.push_back({"device_total_bytes", static_cast<long long>(total_bytes)});
  return run;
}

FaultRun run_too_many_resources(gpu::Session& s, const FaultParams& p) {
  const Pair b = make_pair_buffers(s, p);
  cudaFuncAttributes attr{};
  CD_CHECK(s, cudaFuncGetAttributes(&attr, register_hungry_kernel), "attribute");
  constexpr unsigned kBlock = 1024;
  s.record_launch("register_hungry_kernel", dim3(blocks_for(p.elements)), dim3(kBlock), 0, {b.in, b.out});
  register_hungry_kernel<<<static_cast<unsigned>((p.elements + kBlock - 1) / kBlock), kBlock>>>(b.in, b.out,
                                                                                              p.elements);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  FaultRun run;
  run.facts.push_back({"registers_per_thread", attr.numRegs});
  return run;
}

}  // namespace cudadiag::faults

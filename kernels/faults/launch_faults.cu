// Reproducers rejected at launch or allocation (not sticky: the context survives):
// too many threads per block, dynamic shared memory above the opt-in limit, out of
// memory, and a register-hungry kernel launched with 1024 threads.
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

constexpr unsigned kTooMany = 2048;  // every CUDA GPU allows at most 1024 per block
constexpr unsigned kBigBlock = 1024;

void prepare_pair(FaultContext& c) { alloc_in_out(c); }

void prepare_too_many_threads(FaultContext& c) {
  prepare_pair(c);
  c.facts.push_back({"threads_per_block", kTooMany});
}
void launch_too_many_threads(FaultContext& c) {
  c.s.record_launch("copy_kernel", dim3(1), dim3(kTooMany), 0, {c.in, c.out});
  copy_kernel<<<1, kTooMany>>>(c.in, c.out, c.p.elements);
  CD_CHECK_LAUNCH(c.s);
}

// Opting in up to the limit is legal; the launch then asks for 1 KiB more.
size_t smem_requested(const FaultContext& c) { return static_cast<size_t>(c.facts.at(0).second) + 1024; }
void prepare_smem_over_limit(FaultContext& c) {
  prepare_pair(c);
  int optin = 0;
  CD_CHECK(c.s, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, c.s.device()), "attribute");
  CD_CHECK(c.s, cudaFuncSetAttribute(dynamic_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin),
           "attribute");
  c.facts.push_back({"smem_optin_bytes", optin});
  c.facts.push_back({"smem_requested_bytes", static_cast<long long>(optin) + 1024});
}
void launch_smem_over_limit(FaultContext& c) {
  const size_t requested = smem_requested(c);
  const long long n = c.p.elements;
  c.s.record_launch("dynamic_smem_kernel", dim3(blocks_for(n)), dim3(kThreads), requested, {c.in, c.out});
  dynamic_smem_kernel<<<blocks_for(n), kThreads, requested>>>(c.in, c.out, n);
  CD_CHECK_LAUNCH(c.s);
}

// Twice the device's memory: no allocator can satisfy it, whatever is free.
void prepare_out_of_memory(FaultContext& c) {
  c.make_slots();
  size_t free_bytes = 0, total_bytes = 0;
  CD_CHECK(c.s, cudaMemGetInfo(&free_bytes, &total_bytes), "attribute");
  c.facts.push_back({"device_total_bytes", static_cast<long long>(total_bytes)});
}
void launch_out_of_memory(FaultContext& c) {
  c.s.alloc("huge", 2 * static_cast<size_t>(c.facts.at(0).second));
}

void prepare_too_many_resources(FaultContext& c) {
  prepare_pair(c);
  cudaFuncAttributes attr{};
  CD_CHECK(c.s, cudaFuncGetAttributes(&attr, register_hungry_kernel), "attribute");
  c.facts.push_back({"registers_per_thread", attr.numRegs});
}
void launch_too_many_resources(FaultContext& c) {
  const long long n = c.p.elements;
  const unsigned blocks = static_cast<unsigned>((n + kBigBlock - 1) / kBigBlock);
  c.s.record_launch("register_hungry_kernel", dim3(blocks), dim3(kBigBlock), 0, {c.in, c.out});
  register_hungry_kernel<<<blocks, kBigBlock>>>(c.in, c.out, n);
  CD_CHECK_LAUNCH(c.s);
}

}  // namespace

const ReproducerOps kTooManyThreads{"too-many-threads", prepare_too_many_threads, launch_too_many_threads};
const ReproducerOps kSmemOverLimit{"smem-over-limit", prepare_smem_over_limit, launch_smem_over_limit};
const ReproducerOps kOutOfMemory{"out-of-memory", prepare_out_of_memory, launch_out_of_memory};
const ReproducerOps kTooManyResources{"too-many-resources", prepare_too_many_resources, launch_too_many_resources};

}  // namespace cudadiag::faults

// Reproducers that stop a kernel on purpose: a device-side assert, a trap, and a
// kernel that never ends.
// Release builds define NDEBUG, which would compile the device assert away.
#undef NDEBUG
#include <cassert>
#include <vector>

#include "kernels/faults/fault_support.h"

namespace cudadiag::faults {
namespace {

// A bounds-checked gather: the assert is what PyTorch's index kernels do.
__global__ void device_assert_kernel(const float* in, const long long* idx, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const long long j = idx[i];
    assert(j >= 0 && j < n && "gather index out of range");
    out[i] = in[j];
  }
}

__global__ void trap_kernel(const float* in, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i == n / 2) asm volatile("trap;");
  if (i < n) out[i] = in[i];
}

// Spins until *flag becomes non-zero, which nothing ever does.
__global__ void hang_kernel(const int* flag, float* out) {
  while (*static_cast<const volatile int*>(flag) == 0) {
  }
  out[0] = 1.0f;
}

}  // namespace

FaultRun run_device_assert(gpu::Session& s, const FaultParams& p) {
  const auto host_in = random_floats(p.elements, p.seed);
  std::vector<long long> host_idx(static_cast<size_t>(p.elements));
  for (long long i = 0; i < p.elements; ++i) host_idx[static_cast<size_t>(i)] = p.elements - 1 - i;
  host_idx[static_cast<size_t>(p.elements / 2)] = p.elements;  // the one bad index
  float* in = s.alloc_n<float>("in", host_in.size());
  long long* idx = s.alloc_n<long long>("idx", host_idx.size());
  float* out = s.alloc_n<float>("out", host_in.size());
  s.copy_to_device(in, host_in.data(), host_in.size() * sizeof(float));
  s.copy_to_device(idx, host_idx.data(), host_idx.size() * sizeof(long long));
  s.memset(out, 0xFF, host_in.size() * sizeof(float));
  s.record_launch("device_assert_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), 0, {in, idx, out});
  device_assert_kernel<<<blocks_for(p.elements), kThreads>>>(in, idx, out, p.elements);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  return FaultRun{};  // reaching here means the assert did not fire: the caller sees "ok"
}

FaultRun run_trap(gpu::Session& s, const FaultParams& p) {
  const auto host_in = random_floats(p.elements, p.seed);
  float* in = s.alloc_n<float>("in", host_in.size());
  float* out = s.alloc_n<float>("out", host_in.size());
  s.copy_to_device(in, host_in.data(), host_in.size() * sizeof(float));
  s.memset(out, 0xFF, host_in.size() * sizeof(float));
  s.record_launch("trap_kernel", dim3(blocks_for(p.elements)), dim3(kThreads), 0, {in, out});
  trap_kernel<<<blocks_for(p.elements), kThreads>>>(in, out, p.elements);
  CD_CHECK_LAUNCH(s);
  s.synchronize();
  return FaultRun{};
}

FaultRun run_hang(gpu::Session& s, const FaultParams&) {
  int* flag = s.alloc_n<int>("flag", 1);
  float* out = s.alloc_n<float>("out", 1);
  s.memset(flag, 0, sizeof(int));
  s.record_launch("hang_kernel", dim3(1), dim3(1), 0, {flag, out});
  hang_kernel<<<1, 1>>>(flag, out);
  CD_CHECK_LAUNCH(s);
  s.synchronize();  // never returns: the parent kills the child at the case's deadline
  return FaultRun{};
}

}  // namespace cudadiag::faults

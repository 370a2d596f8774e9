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

// Reaching the end of a run means the assert did not fire: the caller sees "ok".
void prepare_device_assert(FaultContext& c) {
  const long long n = c.p.elements;
  std::vector<long long> host_idx(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) host_idx[static_cast<size_t>(i)] = n - 1 - i;
  host_idx[static_cast<size_t>(n / 2)] = n;  // the one bad index
  c.in = c.s.alloc_n<float>("in", static_cast<size_t>(n));
  c.idx = c.s.alloc_n<long long>("idx", host_idx.size());
  c.make_slots();
  c.out = c.s.alloc_n<float>("out", static_cast<size_t>(n));
  c.in_elems = c.out_elems = n;
  c.s.copy_to_device(c.idx, host_idx.data(), host_idx.size() * sizeof(long long));
}
void launch_device_assert(FaultContext& c) {
  const long long n = c.p.elements;
  c.s.record_launch("device_assert_kernel", dim3(blocks_for(n)), dim3(kThreads), 0, {c.in, c.idx, c.out});
  device_assert_kernel<<<blocks_for(n), kThreads>>>(c.in, c.idx, c.out, n);
  CD_CHECK_LAUNCH(c.s);
}

void prepare_trap(FaultContext& c) { alloc_in_out(c); }
void launch_trap(FaultContext& c) {
  const long long n = c.p.elements;
  c.s.record_launch("trap_kernel", dim3(blocks_for(n)), dim3(kThreads), 0, {c.in, c.out});
  trap_kernel<<<blocks_for(n), kThreads>>>(c.in, c.out, n);
  CD_CHECK_LAUNCH(c.s);
}

// The run's wait never returns: the parent kills the child at the case's deadline.
void prepare_hang(FaultContext& c) {
  c.flag = c.s.alloc_n<int>("flag", 1);
  c.make_slots();
  c.out = c.s.alloc_n<float>("out", 1);
  c.out_elems = 1;
  c.s.memset(c.flag, 0, sizeof(int));
}
void launch_hang(FaultContext& c) {
  c.s.record_launch("hang_kernel", dim3(1), dim3(1), 0, {c.flag, c.out});
  hang_kernel<<<1, 1>>>(c.flag, c.out);
  CD_CHECK_LAUNCH(c.s);
}

}  // namespace

const ReproducerOps kDeviceAssert{"device-assert", prepare_device_assert, launch_device_assert};
const ReproducerOps kTrap{"trap", prepare_trap, launch_trap};
const ReproducerOps kHang{"hang", prepare_hang, launch_hang};

}  // namespace cudadiag::faults

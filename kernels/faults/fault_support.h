#pragma once
// State and helpers shared by the reproducers (internal to kernels/faults).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/faults/faults.h"
#include "kernels/runtime/device_fill.h"

namespace cudadiag::faults {

constexpr unsigned kThreads = 256;
inline unsigned blocks_for(long long n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Inputs are uniform in [-8, 8), never zero (so a kernel that writes nothing is caught);
// stream 0 of the run's seed. Every reproducer computes out[i] = transform(in[...]),
// exact in fp32, so the device check and the host agree bit for bit.
inline constexpr float kInputScale = 8.0f;
CUDADIAG_HD float fault_input(uint64_t seed, long long i) {
  return gpu::fill_value_f32(seed, 0, static_cast<uint64_t>(i), kInputScale);
}
CUDADIAG_HD float transform(float x) { return x * 2.0f + 1.0f; }

struct FaultContext {
  FaultContext(gpu::Session& session, const FaultParams& params) : s(session), p(params) {}
  gpu::Session& s;
  FaultParams p;
  float* in = nullptr;   // filled per run from the seed
  float* out = nullptr;  // poisoned per run
  long long in_elems = 0, out_elems = 0;
  long long* idx = nullptr;
  float* stale = nullptr;
  int* flag = nullptr;
  std::unique_ptr<gpu::RunSlots> slots;
  int max_batch = 1;
  std::vector<std::pair<std::string, long long>> facts;
  // What the check compares: out[i] for i in [first, last) with transform(input(i + shift)).
  bool checks = false;
  long long first = 0, last = 0, shift = 0;

  void check_range(long long f, long long l, long long sh) {
    checks = true, first = f, last = l, shift = sh;
  }
  void make_slots() {
    if (!slots) slots = std::make_unique<gpu::RunSlots>(s, max_batch);
  }
};

// Prepares buffers and static state once; launch() issues the reproducer's kernel for
// one run (record_launch, <<<>>>, check_launch; no wait).
struct ReproducerOps {
  const char* name;
  void (*prepare)(FaultContext&);
  void (*launch)(FaultContext&);
};

// Which of in/out is allocated first. Small cudaMallocs are packed back to back (`direct`
// gave in at [0x..800000, 0x..804000) and out right after it on an H100), and
// compute-sanitizer's memcheck flags only addresses outside every allocation: an overrun
// of the first buffer lands in the second and is missed. So a reproducer allocates the
// buffer it overruns last and the one it underruns first; the counter slots go between.
enum class FirstAlloc { in, out };
void alloc_in_out(FaultContext& c, FirstAlloc first = FirstAlloc::in);

// The reproducers (memory_faults.cu, control_faults.cu, launch_faults.cu).
extern const ReproducerOps kOobWrite, kOobRead, kUnderrunWrite, kUnderrunRead, kMisalignedVectorLoad,
    kUseAfterFree, kOkControl, kDeviceAssert, kTrap, kHang, kTooManyThreads, kSmemOverLimit, kOutOfMemory,
    kTooManyResources;

// The device check of one run (fault_check.cu): counts out[i] != transform(input(i + shift)).
void launch_check_transform(FaultContext& c, uint64_t seed, gpu::RunCounters* slot);

}  // namespace cudadiag::faults

#pragma once
// The fault catalog's reproducers: one small kernel each. Plain C++ header; the
// kernels live in the .cu files of this folder.
//
// run_fault() allocates the reproducer's buffers from the session (so the case's
// allocator mode decides whether an overrun is silent or faults), fills them with
// fresh random data, launches the kernel, synchronises, and compares what can be
// compared against a host reference. CUDA errors are thrown as gpu::CudaError with
// the API call and the kind of call where they surfaced.
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/gpu_runtime.h"

namespace cudadiag::faults {

struct FaultParams {
  std::string reproducer;      // one of reproducer_names()
  long long elements = 4096;   // fp32 elements per buffer (16 KiB: a multiple of 16 bytes)
  long long k = 1;             // overrun / underrun distance in elements
  int offset_bytes = 4;        // misaligned-vector-load: byte offset of the 16-byte load
  unsigned long long seed = 1; // input data
};

struct FaultRun {
  long long checked = 0;     // output elements compared with the host reference
  long long mismatches = 0;
  std::string first_bad;     // "out[12]: got 3.5, expected 1.25" (empty when none)
  std::vector<std::pair<std::string, long long>> facts;  // e.g. registers_per_thread
};

// Names in catalog order.
const std::vector<std::string>& reproducer_names();

// Throws std::invalid_argument for an unknown reproducer, gpu::CudaError for CUDA errors.
FaultRun run_fault(gpu::Session& s, const FaultParams& p);

// Individual reproducers (memory_faults.cu, control_faults.cu, launch_faults.cu).
FaultRun run_oob_write(gpu::Session& s, const FaultParams& p);
FaultRun run_oob_read(gpu::Session& s, const FaultParams& p);
FaultRun run_underrun_write(gpu::Session& s, const FaultParams& p);
FaultRun run_underrun_read(gpu::Session& s, const FaultParams& p);
FaultRun run_misaligned_vector_load(gpu::Session& s, const FaultParams& p);
FaultRun run_use_after_free(gpu::Session& s, const FaultParams& p);
FaultRun run_ok_control(gpu::Session& s, const FaultParams& p);
FaultRun run_device_assert(gpu::Session& s, const FaultParams& p);
FaultRun run_trap(gpu::Session& s, const FaultParams& p);
FaultRun run_hang(gpu::Session& s, const FaultParams& p);
FaultRun run_too_many_threads(gpu::Session& s, const FaultParams& p);
FaultRun run_smem_over_limit(gpu::Session& s, const FaultParams& p);
FaultRun run_out_of_memory(gpu::Session& s, const FaultParams& p);
FaultRun run_too_many_resources(gpu::Session& s, const FaultParams& p);

}  // namespace cudadiag::faults

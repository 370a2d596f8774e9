#pragma once
// Records a kernel launch before it reaches the driver (so that a launch that kills the
// process is still in the ring): kernel name, grid, block, dynamic shared memory,
// stream, and the arguments that point into allocations the interposer knows of.
#include <cuda.h>

#include <cstdint>

#include "apps/interposer/ring_writer.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

struct LaunchArgs {
  ring::Api api = ring::Api::unknown;
  CUfunction function = nullptr;
  unsigned int grid[3] = {1, 1, 1};
  unsigned int block[3] = {1, 1, 1};
  unsigned int dynamic_smem = 0;
  CUstream stream = nullptr;
  void** params = nullptr;  // kernelParams: one pointer per argument
  void** extra = nullptr;   // or CU_LAUNCH_PARAM_BUFFER_POINTER: arguments packed in one buffer
};

// The launch's seq in the ring (kNoLaunch when not kept), for launch_finished().
std::uint64_t record_launch(const LaunchArgs& a) noexcept;
// After the driver's launch call returned: marks the record (under CUDA_LAUNCH_BLOCKING
// the kernel has finished; a launch never marked is a kernel that never did).
void launch_finished(std::uint64_t seq) noexcept;

}  // namespace cudadiag::interposer

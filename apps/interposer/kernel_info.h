#pragma once
// What the interposer knows of a kernel, looked up once per CUfunction: its name (stored
// once in the ring's names region) and where its parameters lie, so that launches can
// record which arguments point into known allocations. The driver tells names since
// 12.3 (cuFuncGetName, cuKernelGetName) and parameter layouts since 12.4
// (cuFuncGetParamInfo, cuKernelGetParamInfo); without them the fields stay empty.
#include <cuda.h>

#include <cstdint>

#include "apps/interposer/ring_writer.h"

namespace cudadiag::interposer {

struct KernelInfo {
  static constexpr int kMaxParams = 64;
  const RingWriter* ring = nullptr;             // the ring `name` refers to (a forked child records elsewhere)
  NameRef name;                                 // in `ring`'s names region
  char name_prefix[ring::kNamePrefixBytes] = {};
  std::uint16_t param_count = 0;                // 0: unknown
  std::uint16_t param_offset[kMaxParams] = {};
  std::uint16_t param_size[kMaxParams] = {};
};

// What is known of `f`, its name registered in `ring` the first time (the driver is asked
// once per kernel; later launches find it without a lock or a copy, so that launches from
// many threads on many devices never wait on each other here). The entry lives as long as
// the process; null when the host is out of memory or the table holds 65,536 kernels
// already (the launch is then recorded without a name).
const KernelInfo* kernel_info(CUfunction f, RingWriter& ring) noexcept;

}  // namespace cudadiag::interposer

#pragma once
// A driver for the interposer's own VMM calls (DriverCalls), in memory: address ranges
// reserved from a counter, handles numbered from 1, every call logged, any call made to
// fail, and what is reserved and mapped now (as the driver's tables hold it). Devices 0..3 answer cuMemGetAllocationGranularity as a real device would (0 and 1
// peers of each other, 1 with GPUDirect RDMA on VMM memory, 0 and 1 with POSIX file
// descriptor handles); 4 answers a granule of 0 and 5 an error, as a driver without VMM
// support can.
#include <cuda.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "apps/interposer/driver_calls.h"

namespace cudadiag::test {

struct FakeVmm {
  static constexpr std::uint64_t kGranule = 2ull << 20;  // devices 0, 1 and 3
  static constexpr std::uint64_t kSmallGranule = 64ull << 10;  // device 2

  // One call as the driver saw it: "reserve", "free", "create", "release", "map", "unmap",
  // "set_access"; its address (or handle), size and, for set_access, the descriptor count.
  struct Call {
    std::string name;
    std::uint64_t value = 0;
    std::uint64_t size = 0;
    std::uint64_t count = 0;
    bool rdma = false;  // create: asked for GPUDirect RDMA
    std::uint64_t handle_types = 0;  // create: requestedHandleTypes
  };
  std::vector<Call> calls;
  std::uint64_t next_address = 0x7f0000000000ull;
  std::uint64_t next_handle = 1;
  // Calls that fail, by name, once each in order of the list: e.g. {"create", OOM}.
  std::vector<std::pair<std::string, CUresult>> failures;

  // [begin, begin + size) ranges reserved and mapped now; kept across reset().
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reserved, mapped;

  // The calls of `name` since the last reset, in order.
  std::vector<Call> of(const std::string& name) const;
  // Whether `address` lies in a reserved range, in a mapped one.
  bool is_reserved(std::uint64_t address) const;
  bool is_mapped(std::uint64_t address) const;
  void reset();
};

// The one fake driver; its DriverCalls point at it.
FakeVmm& fake_vmm();
const interposer::DriverCalls& fake_driver_calls();

}  // namespace cudadiag::test

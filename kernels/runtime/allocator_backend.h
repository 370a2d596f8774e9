#pragma once
// Internal to kernels/runtime: the allocators behind gpu::Session.
#include <cuda.h>

#include <cstddef>
#include <map>
#include <vector>

#include "fence/guard_layout.h"
#include "kernels/runtime/gpu_runtime.h"

namespace cudadiag::gpu {

// One live allocation and what its allocator needs to give it back.
struct Allocation {
  AllocatorMode mode = AllocatorMode::direct;
  unsigned long long address = 0;  // first byte handed out
  size_t bytes = 0;
  size_t slack = 0;  // fence-back: bytes after the buffer that are still mapped (16-byte rounding)
  // fence-*: the reservation (kept until the session ends so that a use after free
  // faults instead of hitting a reused range) and the mapping inside it.
  CUdeviceptr reserved_base = 0;
  size_t reserved_size = 0;
  CUdeviceptr mapped_base = 0;
  size_t mapped_size = 0;
  CUmemGenericAllocationHandle handle = 0;
};

// Slabs of device memory shared by the session's pool buffers, packed back to back
// like a caching allocator's blocks: an overrun of one buffer lands in the next one
// or in the slab's slack, so it stays silent.
class PoolAllocator {
 public:
  static constexpr size_t kAlignment = 512;
  static constexpr size_t kMinSlab = 64ull << 20;
  // A small underrun of a slab's first buffer stays inside the slab (as it would behind
  // an older tensor in a warm cache) instead of touching whatever precedes the slab.
  static constexpr size_t kLeadIn = 4096;
  static constexpr size_t kPage = 2ull << 20;

  explicit PoolAllocator(Session& s) : session_(s) {}
  void* allocate(size_t bytes);
  void release_all() noexcept;

 private:
  struct Slab {
    char* base = nullptr;
    size_t size = 0;
    size_t used = 0;
  };
  Session& session_;
  std::vector<Slab> slabs_;
};

// Driver VMM: each buffer sits flush against an unmapped guard granule, after its end
// (fence-back) or before its start (fence-front).
class FenceAllocator {
 public:
  FenceAllocator(Session& s, int device) : session_(s), device_(device) {}
  Allocation allocate(size_t bytes, AllocatorMode mode);
  // Unmaps and releases the memory; the address range stays reserved.
  void unmap(Allocation& a);
  // Frees a reservation (unmapping first if still mapped); never throws.
  void release_quietly(Allocation& a) noexcept;

 private:
  size_t granularity();
  CUmemAllocationProp prop() const;
  Session& session_;
  int device_;
  size_t granularity_ = 0;
};

class AllocatorBackend {
 public:
  AllocatorBackend(Session& s, int device) : session_(s), pool_(s), fence_(s, device) {}
  ~AllocatorBackend() { release_all(); }
  // Throws CudaError (surfaced_at "malloc").
  Allocation allocate(AllocatorMode mode, size_t bytes);
  // Returns false when ptr is not a live allocation. Throws CudaError (surfaced_at "free").
  bool release(unsigned long long address);
  void release_all() noexcept;

 private:
  Session& session_;
  PoolAllocator pool_;
  FenceAllocator fence_;
  std::map<unsigned long long, Allocation> live_;
  std::vector<Allocation> unmapped_fences_;  // reservations kept to make use-after-free fault
};

using fence::round_up;

}  // namespace cudadiag::gpu

// Dispatch of Session allocations to pool, direct (cudaMalloc) and fence allocators.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "kernels/runtime/allocator_backend.h"

namespace cudadiag::gpu {

Allocation AllocatorBackend::allocate(AllocatorMode mode, size_t bytes) {
  Allocation a;
  switch (mode) {
    case AllocatorMode::pool:
      a.mode = mode;
      a.bytes = bytes;
      a.address = reinterpret_cast<unsigned long long>(pool_.allocate(bytes));
      break;
    case AllocatorMode::direct: {
      void* p = nullptr;
      session_.check(cudaMalloc(&p, std::max<size_t>(bytes, 1)), "cudaMalloc", "malloc", CUDADIAG_HERE);
      a.mode = mode;
      a.bytes = bytes;
      a.address = reinterpret_cast<unsigned long long>(p);
      break;
    }
    case AllocatorMode::fence_back:
    case AllocatorMode::fence_front:
      a = fence_.allocate(bytes, mode);
      break;
  }
  live_[a.address] = a;
  return a;
}

bool AllocatorBackend::release(unsigned long long address) {
  auto it = live_.find(address);
  if (it == live_.end()) return false;
  Allocation a = it->second;
  live_.erase(it);
  switch (a.mode) {
    case AllocatorMode::pool:
      // Like a caching allocator: the block goes back to the cache and stays mapped,
      // so a use after free is silent.
      break;
    case AllocatorMode::direct:
      session_.check(cudaFree(reinterpret_cast<void*>(a.address)), "cudaFree", "free", CUDADIAG_HERE);
      break;
    case AllocatorMode::fence_back:
    case AllocatorMode::fence_front:
      unmapped_fences_.push_back(a);
      fence_.unmap(unmapped_fences_.back());
      break;
  }
  return true;
}

void AllocatorBackend::release_all() noexcept {
  for (auto& [address, a] : live_) {
    if (a.mode == AllocatorMode::direct) cudaFree(reinterpret_cast<void*>(address));
    if (a.mode == AllocatorMode::fence_back || a.mode == AllocatorMode::fence_front) fence_.release_quietly(a);
  }
  live_.clear();
  for (auto& a : unmapped_fences_) fence_.release_quietly(a);
  unmapped_fences_.clear();
  pool_.release_all();
}

}  // namespace cudadiag::gpu

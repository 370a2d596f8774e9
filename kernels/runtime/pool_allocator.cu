// Pool allocator: slabs sub-allocated back to back (what PyTorch's caching allocator does).
#include <cuda_runtime_api.h>

#include <algorithm>

#include "kernels/runtime/allocator_backend.h"

namespace cudadiag::gpu {

void* PoolAllocator::allocate(size_t bytes) {
  const size_t need = round_up(std::max<size_t>(bytes, 1), kAlignment);
  if (slabs_.empty() || slabs_.back().size - slabs_.back().used < need) {
    // Always leave at least one page of slack after the largest buffer so that its
    // overrun stays inside the slab too.
    Slab slab;
    slab.size = std::max(kMinSlab, round_up(kLeadIn + need, kPage) + kPage);
    void* p = nullptr;
    session_.check(cudaMalloc(&p, slab.size), "cudaMalloc(pool slab)", "malloc", CUDADIAG_HERE);
    slab.base = static_cast<char*>(p);
    slab.used = kLeadIn;
    slabs_.push_back(slab);
  }
  Slab& slab = slabs_.back();
  char* out = slab.base + slab.used;
  slab.used += need;
  return out;
}

void PoolAllocator::release_all() noexcept {
  for (auto& slab : slabs_) cudaFree(slab.base);
  slabs_.clear();
}

}  // namespace cudadiag::gpu

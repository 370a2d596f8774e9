// Fence allocator: driver VMM places each buffer flush against unmapped address space.
#include <cuda.h>

#include "fence/guard_layout.h"
#include "kernels/runtime/allocator_backend.h"
#include "kernels/runtime/driver_api.h"

namespace cudadiag::gpu {
namespace {
// Vector loads need 16-byte aligned starts; a fence-back buffer therefore ends at most
// 15 bytes before the guard (recorded as its slack).
constexpr size_t kFenceAlignment = 16;
}  // namespace

CUmemAllocationProp FenceAllocator::prop() const {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device_;
  return p;
}

size_t FenceAllocator::granularity() {
  if (granularity_ == 0) {
    const auto& api = driver_api();
    const CUmemAllocationProp p = prop();
    session_.check_driver(api.mem_get_allocation_granularity(&granularity_, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                          "cuMemGetAllocationGranularity", "malloc", CUDADIAG_HERE);
  }
  return granularity_;
}

Allocation FenceAllocator::allocate(size_t bytes, AllocatorMode mode) {
  const auto& api = driver_api();
  const size_t gran = granularity();
  const size_t mapped = fence::mapped_size(bytes, gran, kFenceAlignment);
  const fence::Side side = mode == AllocatorMode::fence_front ? fence::Side::front : fence::Side::back;

  Allocation a;
  a.mode = mode;
  a.bytes = bytes;
  // As large as the mapping, within the per-buffer bound: a far overrun (a bad gather
  // index, a strided view) faults instead of reaching the next reservation. A case holds
  // few buffers, far from the bound on all guards together.
  const size_t guard = fence::guard_size(fence::wanted_guard(mapped, gran, fence::GuardMode::scaled), gran, 0);
  a.reserved_size = fence::reserved_size(mapped, guard);
  session_.check_driver(api.mem_address_reserve(&a.reserved_base, a.reserved_size, 0, 0, 0),
                        "cuMemAddressReserve", "malloc", CUDADIAG_HERE);
  const fence::Layout layout = fence::place(a.reserved_base, bytes, gran, kFenceAlignment, side, guard);
  try {
    const CUmemAllocationProp p = prop();
    session_.check_driver(api.mem_create(&a.handle, mapped, &p, 0), "cuMemCreate", "malloc", CUDADIAG_HERE);
    a.mapped_base = layout.mapped_begin;
    session_.check_driver(api.mem_map(a.mapped_base, mapped, 0, a.handle, 0), "cuMemMap", "malloc", CUDADIAG_HERE);
    a.mapped_size = mapped;
    CUmemAccessDesc access{};
    access.location = p.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    session_.check_driver(api.mem_set_access(a.mapped_base, mapped, &access, 1), "cuMemSetAccess", "malloc",
                          CUDADIAG_HERE);
  } catch (...) {
    release_quietly(a);
    throw;
  }
  a.address = layout.address;
  a.slack = layout.slack;
  return a;
}

void FenceAllocator::unmap(Allocation& a) {
  const auto& api = driver_api();
  if (a.mapped_size != 0) {
    const size_t size = a.mapped_size;
    a.mapped_size = 0;
    session_.check_driver(api.mem_unmap(a.mapped_base, size), "cuMemUnmap", "free", CUDADIAG_HERE);
  }
  if (a.handle != 0) {
    const auto h = a.handle;
    a.handle = 0;
    session_.check_driver(api.mem_release(h), "cuMemRelease", "free", CUDADIAG_HERE);
  }
}

void FenceAllocator::release_quietly(Allocation& a) noexcept {
  const DriverApi* api = nullptr;
  try {
    api = &driver_api();
  } catch (...) {
    return;
  }
  if (a.mapped_size != 0) api->mem_unmap(a.mapped_base, a.mapped_size);
  if (a.handle != 0) api->mem_release(a.handle);
  if (a.reserved_base != 0) api->mem_address_free(a.reserved_base, a.reserved_size);
  a.mapped_size = 0;
  a.handle = 0;
  a.reserved_base = 0;
}

}  // namespace cudadiag::gpu

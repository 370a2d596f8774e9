// The exported allocation and free entry points: each asks the driver's own function
// only where the interposer does not place the memory itself (device_allocation.h).
#include <cudaTypedefs.h>

#include "apps/interposer/device_allocation.h"
#include "apps/interposer/entry_points.h"
#include "apps/interposer/exported_hooks.h"
#include "apps/interposer/process.h"

using namespace cudadiag::interposer;
namespace ring = cudadiag::ring;

namespace {

template <class Fn>
Fn driver(Entry e) noexcept {
  return real_fn<Fn>(e);
}

// cudaMalloc's alignment: pitched memory keeps it (2D copies and textures assume it).
constexpr std::uint64_t kPitchAlign = 256;

CUresult no_driver() noexcept { return CUDA_ERROR_NOT_INITIALIZED; }

AllocationRequest stream_ordered(ring::Api api, bool per_thread, size_t bytes, CUstream stream, CUmemoryPool pool) {
  AllocationRequest r;
  r.api = api;
  r.bytes = bytes;
  r.stream_ordered = true;
  r.per_thread = per_thread;
  r.stream = stream;
  r.pool = pool;
  return r;
}

CUresult alloc_async(ring::Api api, Entry e, bool per_thread, CUdeviceptr* dptr, size_t bytes, CUstream stream) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemAllocAsync_v11020>(e);
  if (!real) return no_driver();
  return allocate_device(stream_ordered(api, per_thread, bytes, stream, nullptr), dptr,
                         [&] { return real(dptr, bytes, stream); });
}

CUresult alloc_from_pool_async(ring::Api api, Entry e, bool per_thread, CUdeviceptr* dptr, size_t bytes,
                               CUmemoryPool pool, CUstream stream) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemAllocFromPoolAsync_v11020>(e);
  if (!real) return no_driver();
  return allocate_device(stream_ordered(api, per_thread, bytes, stream, pool), dptr,
                         [&] { return real(dptr, bytes, pool, stream); });
}

CUresult free_async(ring::Api api, Entry e, bool per_thread, CUdeviceptr dptr, CUstream stream) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemFreeAsync_v11020>(e);
  if (!real) return no_driver();
  FreeRequest r;
  r.api = api;
  r.address = dptr;
  r.stream_ordered = true;
  r.per_thread = per_thread;
  r.stream = stream;
  return free_device(r, [&] { return real(dptr, stream); });
}

}  // namespace

CUresult hook_cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemAlloc_v3020>(Entry::mem_alloc);
  if (!real) return no_driver();
  AllocationRequest r;
  r.api = ring::Api::cuMemAlloc_v2;
  r.bytes = bytesize;
  return allocate_device(r, dptr, [&] { return real(dptr, bytesize); });
}

CUresult hook_cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                                 unsigned int ElementSizeBytes) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemAllocPitch_v3020>(Entry::mem_alloc_pitch);
  auto real_free = driver<PFN_cuMemFree_v3020>(Entry::mem_free);
  if (!real || !real_free) return no_driver();
  if (!dptr || !pPitch) return real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
  // The driver chooses the pitch: ask it, give its buffer back, fence pitch * height bytes.
  CUdeviceptr probe = 0;
  size_t pitch = 0;
  CUresult rc = real(&probe, &pitch, WidthInBytes, Height, ElementSizeBytes);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY && release_kept_device_memory())
    rc = real(&probe, &pitch, WidthInBytes, Height, ElementSizeBytes);
  if (rc != CUDA_SUCCESS) return rc;
  real_free(probe);
  *pPitch = pitch;
  if (Height != 0 && pitch > ~static_cast<size_t>(0) / Height)
    return real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);  // pitch * height would wrap
  AllocationRequest r;
  r.api = ring::Api::cuMemAllocPitch_v2;
  r.bytes = static_cast<std::uint64_t>(pitch) * Height;
  r.min_align = kPitchAlign;
  return allocate_device(r, dptr, [&] { return real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes); });
}

CUresult hook_cuMemFree_v2(CUdeviceptr dptr) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemFree_v3020>(Entry::mem_free);
  if (!real) return no_driver();
  FreeRequest r;
  r.api = ring::Api::cuMemFree_v2;
  r.address = dptr;
  return free_device(r, [&] { return real(dptr); });
}

CUresult hook_cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return alloc_async(ring::Api::cuMemAllocAsync, Entry::mem_alloc_async, false, dptr, bytesize, hStream);
}

CUresult hook_cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return alloc_async(ring::Api::cuMemAllocAsync_ptsz, Entry::mem_alloc_async_ptsz, true, dptr, bytesize, hStream);
}

CUresult hook_cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  return alloc_from_pool_async(ring::Api::cuMemAllocFromPoolAsync, Entry::mem_alloc_from_pool_async, false, dptr,
                               bytesize, pool, hStream);
}

CUresult hook_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  return alloc_from_pool_async(ring::Api::cuMemAllocFromPoolAsync_ptsz, Entry::mem_alloc_from_pool_async_ptsz, true,
                               dptr, bytesize, pool, hStream);
}

CUresult hook_cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  return free_async(ring::Api::cuMemFreeAsync, Entry::mem_free_async, false, dptr, hStream);
}

CUresult hook_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  return free_async(ring::Api::cuMemFreeAsync_ptsz, Entry::mem_free_async_ptsz, true, dptr, hStream);
}

CUresult hook_cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemAllocManaged_v6000>(Entry::mem_alloc_managed);
  if (!real) return no_driver();
  const CUresult rc = real(dptr, bytesize, flags);
  if (rc == CUDA_SUCCESS && dptr && *dptr)
    note_host_or_managed(ring::Api::cuMemAllocManaged, *dptr, bytesize, ring::Unfenced::managed_memory);
  return rc;
}

CUresult hook_cuMemAllocHost_v2(void** pp, size_t bytesize) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemAllocHost_v3020>(Entry::mem_alloc_host);
  if (!real) return no_driver();
  const CUresult rc = real(pp, bytesize);
  if (rc == CUDA_SUCCESS && pp && *pp)
    note_host_or_managed(ring::Api::cuMemAllocHost_v2, reinterpret_cast<std::uint64_t>(*pp), bytesize,
                         ring::Unfenced::host_memory);
  return rc;
}

CUresult hook_cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemHostAlloc_v2020>(Entry::mem_host_alloc);
  if (!real) return no_driver();
  const CUresult rc = real(pp, bytesize, Flags);
  if (rc == CUDA_SUCCESS && pp && *pp)
    note_host_or_managed(ring::Api::cuMemHostAlloc, reinterpret_cast<std::uint64_t>(*pp), bytesize,
                         ring::Unfenced::host_memory);
  return rc;
}

CUresult hook_cuMemFreeHost(void* p) {
  note_cuda_seen();
  auto real = driver<PFN_cuMemFreeHost_v2000>(Entry::mem_free_host);
  if (!real) return no_driver();
  FreeRequest r;
  r.api = ring::Api::cuMemFreeHost;
  r.address = reinterpret_cast<std::uint64_t>(p);
  return free_device(r, [&] { return real(p); });
}

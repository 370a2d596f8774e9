#include "kernels/interposer/fence_memory.h"

#include <pthread.h>

namespace cudadiag::interposer {
namespace {

constexpr int kMaxDevices = 64;

// What a fenced allocation on one device needs, looked up once per device.
struct DeviceFacts {
  bool known = false;
  std::uint64_t granularity = 0;
  CUresult granularity_result = CUDA_SUCCESS;
  bool rdma = false;           // GPUDirect RDMA on VMM memory (cudaMalloc memory has it)
  int access_count = 0;        // the device, then its peers
  CUmemAccessDesc access[kMaxDevices] = {};
};

DeviceFacts g_devices[kMaxDevices];
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

CUmemAllocationProp allocation_prop(int device, bool rdma) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.allocFlags.gpuDirectRDMACapable = rdma ? 1 : 0;
  return p;
}

void add_access(DeviceFacts& f, int device) {
  CUmemAccessDesc& a = f.access[f.access_count++];
  a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  a.location.id = device;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

void learn(const DriverCalls& d, int device, DeviceFacts& f) {
  const CUmemAllocationProp p = allocation_prop(device, false);
  size_t gran = 0;
  f.granularity_result = d.mem_get_allocation_granularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  f.granularity = f.granularity_result == CUDA_SUCCESS ? gran : 0;
  int rdma = 0;
  if (d.device_get_attribute &&
      d.device_get_attribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, device) ==
          CUDA_SUCCESS)
    f.rdma = rdma != 0;
  add_access(f, device);
  int count = 0;
  if (d.device_get_count && d.device_can_access_peer && d.device_get_count(&count) == CUDA_SUCCESS) {
    for (int peer = 0; peer < count && peer < kMaxDevices && f.access_count < kMaxDevices; ++peer) {
      int can = 0;
      if (peer != device && d.device_can_access_peer(&can, peer, device) == CUDA_SUCCESS && can) add_access(f, peer);
    }
  }
  f.known = true;
}

const DeviceFacts* facts(const DriverCalls& d, int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  pthread_mutex_lock(&g_lock);
  if (!g_devices[device].known) learn(d, device, g_devices[device]);
  pthread_mutex_unlock(&g_lock);
  return &g_devices[device];
}

bool fail(FenceFailure& why, ring::VmmCall call, CUresult rc) {
  why.call = call;
  why.result = rc;
  return false;
}

CUresult create(const DriverCalls& d, int device, bool rdma, std::uint64_t size, CUmemGenericAllocationHandle& h) {
  CUmemAllocationProp p = allocation_prop(device, rdma);
  CUresult rc = d.mem_create(&h, size, &p, 0);
  if (rc != CUDA_SUCCESS && rdma) {
    p = allocation_prop(device, false);
    rc = d.mem_create(&h, size, &p, 0);
  }
  return rc;
}

}  // namespace

bool map_fenced(const DriverCalls& d, int device, std::uint64_t bytes, std::uint64_t align, fence::Side side,
                FencedMemory& out, FenceFailure& why) noexcept {
  const DeviceFacts* f = facts(d, device);
  if (!f) return fail(why, ring::VmmCall::granularity, CUDA_ERROR_INVALID_DEVICE);
  if (f->granularity == 0 || !fence::is_power_of_two(f->granularity))
    return fail(why, ring::VmmCall::granularity,
                f->granularity_result != CUDA_SUCCESS ? f->granularity_result : CUDA_ERROR_NOT_SUPPORTED);
  const std::uint64_t gran = f->granularity;
  const std::uint64_t a = align < gran ? align : gran;
  const std::uint64_t mapped = fence::mapped_size(bytes, gran, a);
  const std::uint64_t reserved = fence::reserved_size(mapped, gran);

  CUdeviceptr base = 0;
  CUresult rc = d.mem_address_reserve(&base, reserved, 0, 0, 0);
  if (rc != CUDA_SUCCESS) return fail(why, ring::VmmCall::reserve, rc);
  const fence::Layout l = fence::place(base, bytes, gran, a, side);

  CUmemGenericAllocationHandle h = 0;
  rc = create(d, device, f->rdma, mapped, h);
  if (rc != CUDA_SUCCESS) {
    d.mem_address_free(base, reserved);
    return fail(why, ring::VmmCall::create, rc);
  }
  rc = d.mem_map(l.mapped_begin, mapped, 0, h, 0);
  if (rc != CUDA_SUCCESS) {
    d.mem_release(h);
    d.mem_address_free(base, reserved);
    return fail(why, ring::VmmCall::map, rc);
  }
  rc = d.mem_set_access(l.mapped_begin, mapped, f->access, static_cast<size_t>(f->access_count));
  if (rc != CUDA_SUCCESS && f->access_count > 1) rc = d.mem_set_access(l.mapped_begin, mapped, f->access, 1);
  if (rc != CUDA_SUCCESS) {
    d.mem_unmap(l.mapped_begin, mapped);
    d.mem_release(h);
    d.mem_address_free(base, reserved);
    return fail(why, ring::VmmCall::set_access, rc);
  }
  out.layout = l;
  out.handle = h;
  out.granularity = gran;
  return true;
}

CUresult unmap_fenced(const DriverCalls& d, std::uint64_t mapped_begin, std::uint64_t mapped_size,
                      std::uint64_t handle) noexcept {
  const CUresult unmapped = d.mem_unmap(mapped_begin, mapped_size);
  const CUresult released = d.mem_release(handle);
  return unmapped != CUDA_SUCCESS ? unmapped : released;
}

}  // namespace cudadiag::interposer

#include "fake_vmm.h"

#include <algorithm>

#include "apps/interposer/process.h"

namespace cudadiag::interposer {
// process.cpp (the ring a process records into) is not compiled into the tests: no ring,
// as in a process started without CUDADIAG_RING; timed() then only makes the call.
RingWriter* recorder() noexcept { return nullptr; }
}  // namespace cudadiag::interposer

namespace cudadiag::test {
namespace {

FakeVmm g_vmm;

CUresult failing(const std::string& name) {
  auto& f = g_vmm.failures;
  const auto it = std::find_if(f.begin(), f.end(), [&](const auto& p) { return p.first == name; });
  if (it == f.end()) return CUDA_SUCCESS;
  const CUresult rc = it->second;
  f.erase(it);
  return rc;
}

CUresult log_call(const std::string& name, std::uint64_t value, std::uint64_t size, std::uint64_t count = 0,
                  bool rdma = false, std::uint64_t handle_types = 0) {
  g_vmm.calls.push_back(FakeVmm::Call{name, value, size, count, rdma, handle_types});
  return failing(name);
}

CUresult granularity(size_t* g, const CUmemAllocationProp* p, CUmemAllocationGranularity_flags) {
  switch (p->location.id) {
    case 2: *g = FakeVmm::kSmallGranule; return CUDA_SUCCESS;
    case 4: *g = 0; return CUDA_SUCCESS;
    case 5: return CUDA_ERROR_NOT_PERMITTED;
    default: *g = FakeVmm::kGranule; return CUDA_SUCCESS;
  }
}

CUresult reserve(CUdeviceptr* ptr, size_t size, size_t, CUdeviceptr, unsigned long long) {
  const std::uint64_t at = g_vmm.next_address;
  const CUresult rc = log_call("reserve", at, size);
  if (rc != CUDA_SUCCESS) return rc;
  *ptr = at;
  g_vmm.reserved.emplace_back(at, size);
  g_vmm.next_address += (size + (1ull << 30) - 1) / (1ull << 30) * (1ull << 30);  // 1 GiB apart
  return rc;
}

// Removes the entry [at, at + size) from `ranges`, as the driver forgets a range.
void forget(std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, std::uint64_t at, std::uint64_t size) {
  const auto it = std::find(ranges.begin(), ranges.end(), std::make_pair(at, size));
  if (it != ranges.end()) ranges.erase(it);
}

CUresult address_free(CUdeviceptr ptr, size_t size) {
  const CUresult rc = log_call("free", ptr, size);
  if (rc == CUDA_SUCCESS) forget(g_vmm.reserved, ptr, size);
  return rc;
}

CUresult create(CUmemGenericAllocationHandle* h, size_t size, const CUmemAllocationProp* p, unsigned long long) {
  const CUresult rc = log_call("create", g_vmm.next_handle, size, 0, p->allocFlags.gpuDirectRDMACapable != 0,
                               static_cast<std::uint64_t>(p->requestedHandleTypes));
  if (rc != CUDA_SUCCESS) return rc;
  *h = g_vmm.next_handle++;
  return rc;
}

CUresult release(CUmemGenericAllocationHandle h) { return log_call("release", h, 0); }

CUresult map(CUdeviceptr ptr, size_t size, size_t, CUmemGenericAllocationHandle h, unsigned long long) {
  const CUresult rc = log_call("map", ptr, size, h);
  if (rc == CUDA_SUCCESS) g_vmm.mapped.emplace_back(ptr, size);
  return rc;
}

CUresult unmap(CUdeviceptr ptr, size_t size) {
  const CUresult rc = log_call("unmap", ptr, size);
  if (rc == CUDA_SUCCESS) forget(g_vmm.mapped, ptr, size);
  return rc;
}

CUresult set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc*, size_t count) {
  return log_call("set_access", ptr, size, count);
}

CUresult device_count(int* n) {
  *n = 4;
  return CUDA_SUCCESS;
}

CUresult can_access_peer(int* can, CUdevice dev, CUdevice peer) {
  *can = (dev == 0 && peer == 1) || (dev == 1 && peer == 0);
  return CUDA_SUCCESS;
}

CUresult attribute(int* v, CUdevice_attribute a, CUdevice dev) {
  *v = (a == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED && dev == 1) ||
       (a == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED && (dev == 0 || dev == 1));
  return CUDA_SUCCESS;
}

interposer::DriverCalls make_calls() {
  interposer::DriverCalls d;
  d.mem_get_allocation_granularity = &granularity;
  d.mem_address_reserve = &reserve;
  d.mem_address_free = &address_free;
  d.mem_create = &create;
  d.mem_release = &release;
  d.mem_map = &map;
  d.mem_unmap = &unmap;
  d.mem_set_access = &set_access;
  d.device_get_count = &device_count;
  d.device_can_access_peer = &can_access_peer;
  d.device_get_attribute = &attribute;
  return d;
}

const interposer::DriverCalls g_calls = make_calls();

}  // namespace

std::vector<FakeVmm::Call> FakeVmm::of(const std::string& name) const {
  std::vector<Call> out;
  for (const auto& c : calls)
    if (c.name == name) out.push_back(c);
  return out;
}

namespace {
bool holds(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, std::uint64_t address) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const auto& r) { return address >= r.first && address - r.first < r.second; });
}
}  // namespace

bool FakeVmm::is_reserved(std::uint64_t address) const { return holds(reserved, address); }
bool FakeVmm::is_mapped(std::uint64_t address) const { return holds(mapped, address); }

void FakeVmm::reset() {
  calls.clear();
  failures.clear();
}

FakeVmm& fake_vmm() { return g_vmm; }
const interposer::DriverCalls& fake_driver_calls() { return g_calls; }

}  // namespace cudadiag::test

// GPU runtime: Session (named buffers per allocator mode, launch log, checked calls).
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/runtime/allocator_backend.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/runtime/gpu_runtime.h"

namespace cudadiag::gpu {

bool launch_blocking() {
  const char* v = std::getenv("CUDA_LAUNCH_BLOCKING");
  return v && std::strcmp(v, "1") == 0;
}

Session::Session(AllocatorMode default_mode, int device) : default_mode_(default_mode), device_(device) {
  check(cudaSetDevice(device), "cudaSetDevice", "init", CUDADIAG_HERE);
  backend_ = std::make_unique<AllocatorBackend>(*this, device);
}

Session::~Session() { free_all(); }

void Session::set_buffer_mode(const std::string& name, AllocatorMode mode) { overrides_[name] = mode; }

AllocatorMode Session::mode_for(const std::string& name) const {
  const auto it = overrides_.find(name);
  return it == overrides_.end() ? default_mode_ : it->second;
}

void* Session::alloc(const std::string& name, size_t bytes, CallSite site) {
  const AllocatorMode mode = mode_for(name);
  Allocation a;
  try {
    a = backend_->allocate(mode, bytes);
  } catch (const CudaError& e) {
    throw e.located_at(site);
  }
  BufferRecord r;
  r.name = name;
  r.address = a.address;
  r.bytes = bytes;
  r.mode = mode;
  r.slack = a.slack;
  buffers_.push_back(std::move(r));
  return reinterpret_cast<void*>(a.address);
}

void Session::free(void* ptr, CallSite site) {
  const auto address = reinterpret_cast<unsigned long long>(ptr);
  for (auto& b : buffers_) {
    if (b.address == address && !b.freed) {
      b.freed = true;
      try {
        backend_->release(address);
      } catch (const CudaError& e) {
        throw e.located_at(site);
      }
      return;
    }
  }
  throw std::invalid_argument("Session::free: pointer was not allocated by this session (or freed twice)");
}

void Session::free_all() noexcept {
  if (backend_) backend_->release_all();
  for (auto& b : buffers_) b.freed = true;
}

void Session::record_launch(const char* kernel, dim3 grid, dim3 block, size_t dynamic_smem,
                            std::initializer_list<const void*> buffer_ptrs) {
  // Keep between kKeepLaunches and twice that: trimming in halves keeps it cheap.
  constexpr size_t kKeepLaunches = 256;
  if (launches_.size() >= 2 * kKeepLaunches)
    launches_.erase(launches_.begin(), launches_.begin() + static_cast<long>(kKeepLaunches));
  LaunchRecord r;
  r.seq = launch_count_++;
  r.kernel = kernel;
  r.grid[0] = grid.x; r.grid[1] = grid.y; r.grid[2] = grid.z;
  r.block[0] = block.x; r.block[1] = block.y; r.block[2] = block.z;
  r.dynamic_smem = dynamic_smem;
  for (const void* p : buffer_ptrs) r.buffers.push_back(buffer_name_for(p));
  launches_.push_back(std::move(r));
}

void Session::check_launch(const char* location) {
  check(cudaGetLastError(), "cudaGetLastError", "launch", location);
}

void Session::check(cudaError_t rc, const char* api_call, const char* surfaced_at, const char* location) {
  if (rc == cudaSuccess) return;
  // Clears a non-sticky error so the next call does not report it again; sticky ones
  // stay in the context whatever we do.
  (void)cudaGetLastError();
  CudaFailure f;
  f.code = static_cast<int>(rc);
  f.name = cudaGetErrorName(rc);
  f.message = cudaGetErrorString(rc);
  f.surfaced_at = surfaced_at;
  f.api_call = api_call;
  f.location = location;
  f.last_kernel = last_kernel();
  throw CudaError(std::move(f));
}

void Session::check_driver(int rc, const char* api_call, const char* surfaced_at, const char* location) {
  if (rc == 0) return;
  CudaFailure f;
  f.code = rc;
  f.driver = true;
  f.name = driver_error_name(rc);
  f.message = driver_error_string(rc);
  f.surfaced_at = surfaced_at;
  f.api_call = api_call;
  f.location = location;
  f.last_kernel = last_kernel();
  throw CudaError(std::move(f));
}

void Session::copy_to_device(void* dst, const void* src, size_t bytes, CallSite site) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy(HostToDevice)", "memcpy", site.text().c_str());
}
void Session::copy_to_host(void* dst, const void* src, size_t bytes, CallSite site) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(DeviceToHost)", "memcpy", site.text().c_str());
}
void Session::memset(void* dst, int value, size_t bytes, CallSite site) {
  check(cudaMemset(dst, value, bytes), "cudaMemset", "memset", site.text().c_str());
}
void Session::synchronize(CallSite site) {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", "synchronize", site.text().c_str());
}

std::string Session::buffer_name_for(const void* ptr) const {
  const auto a = reinterpret_cast<unsigned long long>(ptr);
  for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) {
    if (a >= it->address && a < it->address + it->bytes) return it->name;
  }
  return "";
}

}  // namespace cudadiag::gpu

#pragma once
// The GPU-side runtime every case runs on: named buffers from a chosen allocator,
// a launch log, and CUDA calls checked so that the failure keeps the error code,
// the API call and the kind of call where it surfaced.
//
// Plain C++ header (no fmt/spdlog/json): included by .cu files and by the child
// glue in apps/cudadiag/child_*.cpp.
#include <cuda_runtime_api.h>
#include <driver_types.h>
#include <vector_types.h>

#include <cstddef>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "profiles/allocator.h"

namespace cudadiag::gpu {

// The allocator a buffer comes from (lib/profiles/allocator.h: pool, direct,
// fence-back, fence-front), the same vocabulary the parent plans with.
using AllocatorMode = profiles::Allocator;

// A CUDA error where it surfaced.
struct CudaFailure {
  int code = 0;              // cudaError_t, or CUresult when driver == true
  bool driver = false;
  std::string name;          // cudaErrorIllegalAddress / CUDA_ERROR_ILLEGAL_ADDRESS
  std::string message;       // cudaGetErrorString / cuGetErrorString
  std::string surfaced_at;   // launch | synchronize | memcpy | memset | malloc | free | encode | attribute | ...
  std::string api_call;      // exact call: cudaDeviceSynchronize, cudaMemcpy, cuTensorMapEncodeTiled, ...
  std::string location;      // file:line in cudadiag's source
  std::string last_kernel;   // last kernel launched before the error (launch log)
};

// Where a runtime helper was called from: its default argument is evaluated at the call
// site, so an error inside alloc() or copy_to_host() names the family code that called
// it, not the helper (source paths relative to the repository, -ffile-prefix-map).
struct CallSite {
  const char* file;
  int line;
  static CallSite current(const char* file = __builtin_FILE(), int line = __builtin_LINE()) { return {file, line}; }
  std::string text() const { return std::string(file) + ":" + std::to_string(line); }
};

class CudaError : public std::exception {
 public:
  explicit CudaError(CudaFailure f) : failure_(std::move(f)) {}
  const char* what() const noexcept override { return failure_.message.c_str(); }
  const CudaFailure& failure() const { return failure_; }
  // The same error, located at the helper's caller.
  CudaError located_at(const CallSite& site) const {
    CudaFailure f = failure_;
    f.location = site.text();
    return CudaError(std::move(f));
  }

 private:
  CudaFailure failure_;
};

struct BufferRecord {
  std::string name;
  unsigned long long address = 0;  // device address of the first byte handed out
  unsigned long long bytes = 0;    // bytes requested
  AllocatorMode mode = AllocatorMode::direct;
  bool freed = false;
  // fence-back only: bytes still mapped after the buffer's end (its size rounded up to
  // 16 for aligned vector access); an overrun shorter than this stays silent.
  unsigned long long slack = 0;
};

struct LaunchRecord {
  unsigned long long seq = 0;
  std::string kernel;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t dynamic_smem = 0;
  std::vector<std::string> buffers;  // names of the buffers passed (resolved from pointers)
};

class AllocatorBackend;  // defined in the .cu files

// One per case run in the child. Not thread-safe.
class Session {
 public:
  // Selects the device (cudaSetDevice); throws CudaError (surfaced_at "init") when it
  // cannot, e.g. no device (100) or a driver too old for this runtime (35).
  explicit Session(AllocatorMode default_mode, int device = 0);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  AllocatorMode default_mode() const { return default_mode_; }
  int device() const { return device_; }
  // Per-buffer allocator override (fault bisection fences some buffers, the rest direct).
  void set_buffer_mode(const std::string& name, AllocatorMode mode);
  AllocatorMode mode_for(const std::string& name) const;

  // Allocates a named buffer; throws CudaError (surfaced_at "malloc").
  void* alloc(const std::string& name, size_t bytes, CallSite site = CallSite::current());
  template <typename T>
  T* alloc_n(const std::string& name, size_t count, CallSite site = CallSite::current()) {
    return static_cast<T*>(alloc(name, count * sizeof(T), site));
  }
  // Frees one buffer; throws CudaError (surfaced_at "free"), std::invalid_argument for a
  // pointer this session did not hand out. pool: the block stays mapped (a use after free
  // is silent); direct: cudaFree; fence-*: unmapped, the range stays reserved (a use after
  // free faults).
  void free(void* ptr, CallSite site = CallSite::current());
  // Frees everything still allocated; never throws (used on teardown).
  void free_all() noexcept;

  // Launch log. Call record_launch just before the <<<>>> and check_launch right after.
  // Only the most recent launches are kept (a repeat series launches millions); seq
  // keeps counting.
  void record_launch(const char* kernel, dim3 grid, dim3 block, size_t dynamic_smem,
                     std::initializer_list<const void*> buffer_ptrs);
  // cudaGetLastError after a launch (surfaced_at "launch"); with CUDA_LAUNCH_BLOCKING
  // set, errors of the kernel itself also surface here.
  void check_launch(const char* location);
  // Checks one runtime API call; throws CudaError when rc != cudaSuccess.
  void check(cudaError_t rc, const char* api_call, const char* surfaced_at, const char* location);
  // Checks a driver API result (CUresult as int); name/message come from the driver.
  void check_driver(int rc, const char* api_call, const char* surfaced_at, const char* location);

  // Copies with checks (surfaced_at "memcpy" / "memset" / "synchronize").
  void copy_to_device(void* dst, const void* src, size_t bytes, CallSite site = CallSite::current());
  void copy_to_host(void* dst, const void* src, size_t bytes, CallSite site = CallSite::current());
  void memset(void* dst, int value, size_t bytes, CallSite site = CallSite::current());
  void synchronize(CallSite site = CallSite::current());

  const std::vector<LaunchRecord>& launches() const { return launches_; }
  const std::vector<BufferRecord>& buffers() const { return buffers_; }
  // Name of the buffer whose range holds ptr ("" when none).
  std::string buffer_name_for(const void* ptr) const;
  std::string last_kernel() const { return launches_.empty() ? "" : launches_.back().kernel; }

 private:
  AllocatorMode default_mode_;
  int device_;
  std::map<std::string, AllocatorMode> overrides_;
  std::vector<BufferRecord> buffers_;
  std::vector<LaunchRecord> launches_;
  unsigned long long launch_count_ = 0;
  std::unique_ptr<AllocatorBackend> backend_;
};

// True when CUDA_LAUNCH_BLOCKING=1 is set in this process's environment.
bool launch_blocking();

}  // namespace cudadiag::gpu

#define CUDADIAG_STR2(x) #x
#define CUDADIAG_STR(x) CUDADIAG_STR2(x)
#define CUDADIAG_HERE __FILE__ ":" CUDADIAG_STR(__LINE__)
// CD_CHECK(session, cudaMemcpy(...), "memcpy")
#define CD_CHECK(session, call, surfaced) (session).check((call), #call, (surfaced), CUDADIAG_HERE)
#define CD_CHECK_LAUNCH(session) (session).check_launch(CUDADIAG_HERE)

// Does what a CUDA 12+ runtime does, static or shared: dlopen libcuda.so.1 privately,
// dlsym cuGetProcAddress_v2, ask it for cuGetProcAddress, and take every other entry point
// from that. Run against the fake driver (tests/interposer/fake_driver), with and without
// the interposer preloaded; each mode prints what it did, or dies on a guard.
//
//   static_runtime resolve          where each cuGetProcAddress answer lives
//   static_runtime clean            allocations, launches and frees in bounds; a checksum
//                                   (PROBE_NO_MANAGED=1: without its managed buffer)
//   static_runtime overrun          writes one byte past a 4,000-byte buffer from the host
//   static_runtime kernel-overrun   a launch writes one byte past it
//   static_runtime underrun         writes one byte before it
//   static_runtime slack-overrun    a launch writes one byte past a 4,002-byte buffer (into the
//                                   alignment slack), then frees it
//   static_runtime managed-overrun  a launch writes one byte past a 4,000-byte cuMemAllocManaged buffer
//   static_runtime use-after-free   writes into it after cuMemFree
//   static_runtime double-free      frees it twice, prints the second answer
//   static_runtime fork             allocates, then a forked child allocates and frees too
//   static_runtime cycles N         N buffers of 1, 2 and 4 granules in turn, each filled and freed
//   static_runtime reuse-after-free frees a buffer, allocates one of its size, writes into the first
//   static_runtime big-after-small  frees three 1-granule buffers, then allocates a 4-granule one
//   static_runtime huge             asks for SIZE_MAX bytes and sizes whose round-up overflows
// Launchers that drop the interposer (each passes on LD_LIBRARY_PATH only, as a cleaned
// environment would, and dies of the signal its child died of):
//   static_runtime env-i MODE       runs `env -i LD_LIBRARY_PATH=... <itself> MODE`
//   static_runtime spawn-empty MODE posix_spawn of itself with MODE and nothing else in the environment
//   static_runtime exec PROGRAM     execv of PROGRAM with an empty environment
//   static_runtime deepbind         loads $PROBE_DEEPBIND_LIBRARY with RTLD_DEEPBIND; it overruns a buffer
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "end_like.h"
#include "probe_driver.h"

namespace {

using probe::fill;
using probe::fill_bytes;
using probe::g_gpa;
using probe::get;


int fail(const char* what, int rc) {
  std::printf("FAILED: %s returned %d\n", what, rc);
  return 1;
}


// "fence:<symbol>" when the interposer answered, "driver:<symbol>" or "driver:internal".
std::string where(void* p) {
  if (!p) return "null";
  Dl_info info{};
  if (!dladdr(p, &info) || !info.dli_fname) return "unknown";
  const bool ours = std::strstr(info.dli_fname, "libcudadiag_fence") != nullptr;
  if (!info.dli_sname || info.dli_saddr != p) return ours ? "fence:internal" : "driver:internal";
  return std::string(ours ? "fence:" : "driver:") + info.dli_sname;
}

int resolve() {
  struct Query {
    const char* symbol;
    int version;
    cuuint64_t flags;
  };
  const cuuint64_t ptds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  const cuuint64_t legacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  const Query queries[] = {
      {"cuGetProcAddress", 12000, 0},      {"cuGetProcAddress", 11030, 0},   {"cuMemAlloc", 12000, 0},
      {"cuMemAlloc", 3000, 0},             {"cuMemFree", 13000, legacy},     {"cuMemAllocAsync", 12000, ptds},
      {"cuMemAllocAsync", 12000, legacy},  {"cuMemAllocAsync", 11000, 0},    {"cuLaunchKernel", 12000, ptds},
      {"cuLaunchKernel", 12000, 0},        {"cuLaunchKernelEx", 12000, ptds}, {"cuCtxGetDevice", 12000, 0},
      {"cuTensorMapEncodeTiled", 12000, 0}, {"cuNoSuchFunction", 12000, 0},
  };
  for (const Query& q : queries) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status{};
    const int rc = g_gpa(q.symbol, &p, q.version, q.flags, &status);
    std::printf("%s@%d/%d: rc=%d status=%d -> %s\n", q.symbol, q.version, static_cast<int>(q.flags), rc,
                static_cast<int>(status), where(p).c_str());
  }
  // cudart asks with no symbolStatus at times.
  void* p = nullptr;
  const int rc = g_gpa("cuMemAlloc", &p, 12000, 0, nullptr);
  std::printf("cuMemAlloc@12000 without symbolStatus: rc=%d -> %s\n", rc, where(p).c_str());
  return 0;
}

struct Api {
  PFN_cuInit_v2000 init = get<PFN_cuInit_v2000>("cuInit");
  PFN_cuMemAlloc_v3020 alloc = get<PFN_cuMemAlloc_v3020>("cuMemAlloc");
  PFN_cuMemFree_v3020 free = get<PFN_cuMemFree_v3020>("cuMemFree");
  PFN_cuMemAllocAsync_v11020_ptsz alloc_async = get<PFN_cuMemAllocAsync_v11020_ptsz>("cuMemAllocAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  PFN_cuMemFreeAsync_v11020_ptsz free_async = get<PFN_cuMemFreeAsync_v11020_ptsz>("cuMemFreeAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  PFN_cuMemAllocManaged_v6000 alloc_managed = get<PFN_cuMemAllocManaged_v6000>("cuMemAllocManaged");
  PFN_cuMemAllocHost_v3020 alloc_host = get<PFN_cuMemAllocHost_v3020>("cuMemAllocHost");
  PFN_cuMemFreeHost_v2000 free_host = get<PFN_cuMemFreeHost_v2000>("cuMemFreeHost");
  PFN_cuMemAllocPitch_v3020 alloc_pitch = get<PFN_cuMemAllocPitch_v3020>("cuMemAllocPitch");
  PFN_cuModuleLoadData_v2000 load = get<PFN_cuModuleLoadData_v2000>("cuModuleLoadData");
  PFN_cuModuleGetFunction_v2000 function = get<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction");
  PFN_cuLaunchKernel_v7000_ptsz launch = get<PFN_cuLaunchKernel_v7000_ptsz>("cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  PFN_cuLaunchKernelEx_v11060 launch_ex = get<PFN_cuLaunchKernelEx_v11060>("cuLaunchKernelEx");
  PFN_cuTensorMapEncodeTiled_v12000 encode = get<PFN_cuTensorMapEncodeTiled_v12000>("cuTensorMapEncodeTiled");
};


// Every allocation kind in bounds: the output must not change under the interposer.
int clean(const Api& api) {
  CUfunction f = fill_bytes(api);
  if (!f) return fail("cuModuleGetFunction", 0);
  const std::size_t sizes[] = {1, 15, 16, 4000, 65537, 1u << 20};
  CUdeviceptr buffers[6] = {};
  unsigned long long checksum = 0;
  for (int i = 0; i < 6; ++i) {
    if (int rc = api.alloc(&buffers[i], sizes[i])) return fail("cuMemAlloc", rc);
    if (int rc = fill(api, f, buffers[i], sizes[i], i + 1)) return fail("cuLaunchKernel", rc);
    const auto* bytes = reinterpret_cast<const unsigned char*>(buffers[i]);
    for (std::size_t j = 0; j < sizes[i]; ++j) checksum += bytes[j] * (j % 7 + 1);
  }
  // Stream-ordered, on the per-thread default stream.
  CUdeviceptr async = 0;
  if (int rc = api.alloc_async(&async, 3000, nullptr)) return fail("cuMemAllocAsync_ptsz", rc);
  if (int rc = fill(api, f, async, 3000, 9)) return fail("cuLaunchKernel", rc);
  checksum += reinterpret_cast<const unsigned char*>(async)[2999];
  if (int rc = api.free_async(async, nullptr)) return fail("cuMemFreeAsync_ptsz", rc);
  // Arguments packed in one buffer, through cuLaunchKernelEx.
  struct {
    CUdeviceptr p;
    unsigned long n;
    int value;
    int pad;
  } packed{buffers[3], 4000, 0x5a, 0};
  size_t packed_size = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   CU_LAUNCH_PARAM_END};
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 2;
  config.blockDimX = 64;
  config.blockDimY = config.blockDimZ = 1;
  if (int rc = api.launch_ex(&config, f, nullptr, extra)) return fail("cuLaunchKernelEx", rc);
  checksum += reinterpret_cast<const unsigned char*>(buffers[3])[3999];
  // Managed, host and pitched memory.
  CUdeviceptr managed = 0, pitched = 0;
  void* host = nullptr;
  size_t pitch = 0;
  // PROBE_NO_MANAGED=1: no managed buffer (the fence cannot guard one), so that every device buffer is fenced.
  const bool no_managed = std::getenv("PROBE_NO_MANAGED") && std::strcmp(std::getenv("PROBE_NO_MANAGED"), "1") == 0;
  if (!no_managed)
    if (int rc = api.alloc_managed(&managed, 100, CU_MEM_ATTACH_GLOBAL)) return fail("cuMemAllocManaged", rc);
  if (int rc = api.alloc_host(&host, 100)) return fail("cuMemAllocHost", rc);
  if (int rc = api.alloc_pitch(&pitched, &pitch, 100, 3, 4)) return fail("cuMemAllocPitch", rc);
  std::memset(reinterpret_cast<void*>(pitched), 1, pitch * 3);
  std::printf("pitch=%zu\n", pitch);
  CUtensorMap map{};
  cuuint64_t dims[2] = {64, 64}, strides[1] = {256};
  cuuint32_t box[2] = {16, 16}, element_strides[2] = {1, 1};
  if (int rc = api.encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(buffers[5]), dims, strides,
                          box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                          CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
    return fail("cuTensorMapEncodeTiled", rc);
  // A 4,000-byte buffer as a 10 x 100 float tensor: its base lies 4,000 bytes before the guard.
  cuuint64_t small_dims[2] = {100, 10}, small_strides[1] = {400};
  if (int rc = api.encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(buffers[3]), small_dims,
                          small_strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
    return fail("cuTensorMapEncodeTiled", rc);
  for (CUdeviceptr b : buffers)
    if (int rc = api.free(b)) return fail("cuMemFree", rc);
  if (!no_managed)
    if (int rc = api.free(managed)) return fail("cuMemFree (managed)", rc);
  if (int rc = api.free(pitched)) return fail("cuMemFree (pitched)", rc);
  if (int rc = api.free_host(host)) return fail("cuMemFreeHost", rc);
  std::printf("checksum=%llu\nclean ok\n", checksum);
  return 0;
}

// Buffer lives of mixed sizes, as a training loop without a caching allocator has them.
int cycles(const Api& api, int n) {
  CUfunction f = fill_bytes(api);
  if (!f) return fail("cuModuleGetFunction", 0);
  const std::size_t sizes[] = {1000, 70000, 200000};  // 1, 2 and 4 granules of 64 KiB
  unsigned long long checksum = 0;
  for (int i = 0; i < n; ++i) {
    const std::size_t bytes = sizes[i % 3];
    CUdeviceptr p = 0;
    if (int rc = api.alloc(&p, bytes)) return fail("cuMemAlloc", rc);
    if (int rc = fill(api, f, p, bytes, i % 251 + 1)) return fail("cuLaunchKernel", rc);
    const auto* b = reinterpret_cast<const unsigned char*>(p);
    checksum += b[0] + b[bytes - 1] * 3ull;
    if (int rc = api.free(p)) return fail("cuMemFree", rc);
  }
  std::printf("cycles=%d checksum=%llu\n", n, checksum);
  return 0;
}

// A freed buffer's memory serves the next buffer of its size at another address; the
// freed address still faults.
int reuse_after_free(const Api& api) {
  CUfunction f = fill_bytes(api);
  if (!f) return fail("cuModuleGetFunction", 0);
  CUdeviceptr a = 0, b = 0;
  if (int rc = api.alloc(&a, 4000)) return fail("cuMemAlloc", rc);
  if (int rc = fill(api, f, a, 4000, 0xab)) return fail("cuLaunchKernel", rc);
  if (int rc = api.free(a)) return fail("cuMemFree", rc);
  if (int rc = api.alloc(&b, 4000)) return fail("cuMemAlloc", rc);
  std::printf("fresh address=%s\n", b != a ? "yes" : "no");
  std::printf("previous bytes=%s\n", reinterpret_cast<const unsigned char*>(b)[0] == 0xab ? "yes" : "no");
  std::fflush(stdout);
  reinterpret_cast<volatile unsigned char*>(a)[0] = 1;
  std::printf("use after free: no fault\n");
  return 0;
}

// With CUDADIAG_FENCE_RECYCLE_MB a freed buffer's mapping serves the next buffer of its
// mapped size, its pointer placed anew flush against the same guard: a write one byte
// past the new, smaller buffer's rounded end faults.
int recycle_overrun(const Api& api) {
  CUdeviceptr a = 0, b = 0;
  if (int rc = api.alloc(&a, 1000)) return fail("cuMemAlloc", rc);
  if (int rc = api.free(a)) return fail("cuMemFree", rc);
  if (int rc = api.alloc(&b, 900)) return fail("cuMemAlloc", rc);
  std::printf("recycled=%s\n", b > a && b - a == 1008 - 912 ? "yes" : "no");
  std::fflush(stdout);
  reinterpret_cast<volatile unsigned char*>(b)[911] = 1;  // the last byte of the rounded buffer
  std::printf("last byte written\n");
  std::fflush(stdout);
  reinterpret_cast<volatile unsigned char*>(b)[912] = 1;  // the guard's first byte
  std::printf("overrun: no fault\n");
  return 0;
}

// Memory kept for reuse must not make a larger allocation fail.
int big_after_small(const Api& api) {
  CUdeviceptr small[3] = {};
  for (auto& p : small)
    if (int rc = api.alloc(&p, 1000)) return fail("cuMemAlloc", rc);
  for (auto p : small)
    if (int rc = api.free(p)) return fail("cuMemFree", rc);
  CUdeviceptr big = 0;
  if (int rc = api.alloc(&big, 200000)) return fail("cuMemAlloc (big)", rc);
  std::memset(reinterpret_cast<void*>(big), 1, 200000);
  if (int rc = api.free(big)) return fail("cuMemFree (big)", rc);
  std::printf("big allocation ok\n");
  return 0;
}

// Sizes no device has: the driver's answer, never a small buffer.
int huge(const Api& api) {
  const std::size_t sizes[] = {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - (1u << 16), SIZE_MAX / 2 + 1};
  for (const std::size_t bytes : sizes) {
    CUdeviceptr p = 0;
    const int rc = api.alloc(&p, bytes);
    std::printf("cuMemAlloc(%zu): rc=%d pointer=%s\n", bytes, rc, p ? "set" : "null");
    if (rc == 0) api.free(p);
  }
  return 0;
}

std::string library_path_entry() {
  const char* p = std::getenv("LD_LIBRARY_PATH");
  return std::string("LD_LIBRARY_PATH=") + (p ? p : "");
}

int launch(const char* self, const std::string& how, const char* mode) {
  std::string lib = library_path_entry();
  std::fflush(stdout);
  if (how == "env-i") {
    const pid_t child = fork();
    if (child == 0) {
      char* argv[] = {const_cast<char*>("env"), const_cast<char*>("-i"), lib.data(), const_cast<char*>(self),
                      const_cast<char*>(mode), nullptr};
      execvp("env", argv);
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return end_like(status);
  }
  if (how == "spawn-empty") {
    char* argv[] = {const_cast<char*>(self), const_cast<char*>(mode), nullptr};
    char* envp[] = {lib.data(), nullptr};
    pid_t child = 0;
    if (int rc = posix_spawn(&child, self, nullptr, nullptr, argv, envp)) return fail("posix_spawn", rc);
    int status = 0;
    waitpid(child, &status, 0);
    return end_like(status);
  }
  // exec PROGRAM: this process becomes it, with nothing in its environment.
  char* argv[] = {const_cast<char*>(mode), nullptr};
  char* envp[] = {nullptr};
  execve(mode, argv, envp);
  return fail("execve", errno);
}

int deepbind() {
  const char* path = std::getenv("PROBE_DEEPBIND_LIBRARY");
  void* lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) : nullptr;
  if (!lib) return fail("dlopen with RTLD_DEEPBIND", 0);
  auto run = reinterpret_cast<int (*)()>(dlsym(lib, "deepbind_overrun"));
  if (!run) return fail("dlsym deepbind_overrun", 0);
  return run();
}

int misuse(const Api& api, const std::string& mode) {
  CUdeviceptr p = 0;
  if (mode == "slack-overrun" || mode == "managed-overrun") {
    const bool managed = mode == "managed-overrun";
    const unsigned long n = managed ? 4000 : 4002;
    if (int rc = managed ? api.alloc_managed(&p, n, CU_MEM_ATTACH_GLOBAL) : api.alloc(&p, n))
      return fail("allocation", rc);
    CUfunction f = fill_bytes(api);
    if (!f) return fail("cuModuleGetFunction", 0);
    if (int rc = fill(api, f, p, n + 1, 7)) return fail("cuLaunchKernel", rc);
    if (int rc = api.free(p)) return fail("cuMemFree", rc);
    std::printf("%s: no fault\n", mode.c_str());
    return 0;
  }
  if (int rc = api.alloc(&p, 4000)) return fail("cuMemAlloc", rc);
  auto* bytes = reinterpret_cast<volatile unsigned char*>(p);
  if (mode == "overrun") {
    bytes[4000] = 1;
  } else if (mode == "underrun") {
    bytes[-1] = 1;
  } else if (mode == "kernel-overrun") {
    CUfunction f = fill_bytes(api);
    if (!f) return fail("cuModuleGetFunction", 0);
    if (int rc = fill(api, f, p, 4001, 7)) return fail("cuLaunchKernel", rc);
  } else if (mode == "use-after-free") {
    if (int rc = api.free(p)) return fail("cuMemFree", rc);
    bytes[0] = 1;
  } else if (mode == "fork") {
    const pid_t child = fork();
    if (child == 0) {
      CUdeviceptr q = 0;
      const bool ok = api.alloc(&q, 100) == CUDA_SUCCESS && api.free(q) == CUDA_SUCCESS;
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) return fail("fork", 0);
    std::printf("child exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
  } else if (mode == "double-free") {
    if (int rc = api.free(p)) return fail("cuMemFree", rc);
    std::printf("second free: %d\n", static_cast<int>(api.free(p)));
    return 0;
  } else {
    std::printf("unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("%s: no fault\n", mode.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "clean";
  if ((mode == "env-i" || mode == "spawn-empty" || mode == "exec") && argc > 2) return launch(argv[0], mode, argv[2]);
  if (mode == "deepbind") return deepbind();
  const char* what = nullptr;
  int rc = 0;
  if (!probe::open_driver(what, rc)) return fail(what, rc);
  if (mode == "resolve") return resolve();
  const Api api;
  if (int rc = api.init(0)) return fail("cuInit", rc);
  if (mode == "clean") return clean(api);
  if (mode == "cycles") return cycles(api, argc > 2 ? std::atoi(argv[2]) : 30);
  if (mode == "reuse-after-free") return reuse_after_free(api);
  if (mode == "recycle-overrun") return recycle_overrun(api);
  if (mode == "big-after-small") return big_after_small(api);
  if (mode == "huge") return huge(api);
  return misuse(api, mode);
}

// A stand-in for libcuda.so.1 on machines without a GPU, for the interposer's tests.
// "Device memory" is host memory: cuMemAlloc hands out heap blocks with slack after
// them (a small overrun stays silent, as in a real driver's rounding), and the VMM calls
// reserve with mmap(PROT_NONE), back each cuMemCreate handle with its own memfd (mapping
// a handle twice shows the same bytes, as physical memory does), map it with
// MAP_SHARED and grant access with mprotect, so a guard is a real unmapped page and
// touching it raises SIGSEGV. "Kernels" run on the host: fill_bytes(p, n, value) writes
// n bytes. cuGetProcAddress answers by base name, version and per-thread flag like the
// driver. Switches:
//   FAKE_CUDA_INTERNAL_POINTERS=1  answer with internal functions instead of the exported
//                                  ones (as a driver may)
//   FAKE_CUDA_FAIL_CREATE=1        cuMemCreate fails with out of memory
//   FAKE_CUDA_FAIL_UNMAP=1         cuMemUnmap fails and leaves the mapping
//   FAKE_CUDA_MEMORY_KB=N          cuMemCreate runs out of memory beyond N KiB of handles
//                                  not yet released
//   FAKE_CUDA_STATS=FILE           at exit, how often each VMM call was made, one
//                                  "name=count" a line
// GPU core dumps, as the driver writes them (the content is a real dump, copied):
//   FAKE_CUDA_COREDUMP_FROM=FILE   the dump written on an exception when the program armed
//                                  CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1: to CUDA_COREDUMP_FILE
//                                  (%p the pid, %h the host name, %t the time). An exception
//                                  is a launch whose kernel touches a guard (SIGSEGV caught
//                                  while it runs), or every launch with FAKE_CUDA_FAULT=1.
//                                  Then, as the driver: with skip_abort in
//                                  CUDA_COREDUMP_GENERATION_FLAGS the launch returns
//                                  CUDA_ERROR_ILLEGAL_ADDRESS (CUDA_SUCCESS with
//                                  FAKE_CUDA_HIDE_FAULT=1: the program does not see it),
//                                  without it the process aborts
//   FAKE_CUDA_FAULT=1              every launch faults (without dumps armed it returns
//                                  CUDA_ERROR_ILLEGAL_ADDRESS)
//   FAKE_CUDA_ASYNC_FAULT=1        a kernel that touches a guard faults as without launch
//                                  blocking: its launch returns CUDA_SUCCESS, and every
//                                  cuCtxSynchronize after it CUDA_ERROR_ILLEGAL_ADDRESS
//                                  (sticky)
//   FAKE_CUDA_HANG=1               a launched kernel never finishes (the launch call
//                                  never returns, as under CUDA_LAUNCH_BLOCKING)
//   FAKE_CUDA_HANG_DUMP_FROM=FILE  with CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 and
//                                  CUDA_COREDUMP_PIPE: the pipe is made at cuInit (or the
//                                  first launch); once FAKE_CUDA_PIPE_BYTES (default 1) bytes
//                                  were read from it, this dump is written to
//                                  CUDA_COREDUMP_FILE in two halves 300 ms apart, and the
//                                  process aborts, as the driver did on an H100
// cuMemsetD8 and cuMemcpyDtoH work on the host memory that stands for device memory.
// cuDeviceGetUuid and cuDeviceGetPCIBusId name device d as GPU-fa4e0000-0000-0000-0000-
// 0000000000<d> at bus 0000:00:<6 + d>.0 (device 0's bus is the one the Xid lines name).
// CUDA IPC, as the driver does it: cuMemAlloc's blocks lie in one shared memory file, so
// that the legacy cuIpcGetMemHandle / cuIpcOpenMemHandle hand a block to another process
// of the same user (it maps the file through /proc/<pid>/fd); like the driver's, they
// refuse VMM memory (CUDA_ERROR_INVALID_VALUE). cuMemCreate memory made exportable
// (requestedHandleTypes with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) is exported by
// cuMemExportToShareableHandle as a real file descriptor (its memfd) and imported by
// cuMemImportFromShareableHandle; cuMemRetainAllocationHandle and cuMemGetAddressRange
// answer for what is mapped.
//   FAKE_CUDA_NO_FD_HANDLES=1      the device does not support POSIX file descriptor handles
//   FAKE_CUDA_KMSG=FILE            a kernel that touches a guard is an exception written to
//                                  FILE as the kernel log's Xid 31 line (/dev/kmsg's format,
//                                  the pid, the faulting 4 KiB page), and the launch returns
//                                  CUDA_ERROR_ILLEGAL_ADDRESS
// Several devices, as a multi-GPU node has them:
//   FAKE_CUDA_DEVICES=N            N devices (default 1, at most 8), each with one primary
//                                  context (0x1 for device 0, 0x2 for device 1, ...), peers of
//                                  each other. Each thread has its own context stack
//                                  (cuCtxGetCurrent/SetCurrent/PushCurrent/PopCurrent), the
//                                  primary context of device 0 current at first. Memory
//                                  belongs to the current context's device (cuMemAlloc) or to
//                                  the device cuMemCreate names; a kernel runs on the current
//                                  device and touches another device's memory only as the
//                                  driver allows it: cuMemAlloc memory after
//                                  cuCtxEnablePeerAccess, VMM memory where cuMemSetAccess
//                                  granted that device. Otherwise the launch returns
//                                  CUDA_ERROR_ILLEGAL_ADDRESS (sticky in the real driver).
//   FAKE_CUDA_TRACE=FILE           appends one line per context switch, synchronize, unmap and
//                                  access change, in the order the calls came:
//                                  "cuCtxSynchronize ctx=0x2", "cuMemUnmap 0x7f.. device=1", ...
// Every entry point may be called from several threads at once.
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

std::uint64_t granularity() { return 64 * 1024; }

// One lock over the driver's tables (blocks, handles, mappings, imports, peers): every
// entry point may be called from several threads. Recursive: an entry point may call another.
pthread_mutex_t g_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
struct Locked {
  Locked() { pthread_mutex_lock(&g_lock); }
  ~Locked() { pthread_mutex_unlock(&g_lock); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
};

// ---- Devices and contexts ----------------------------------------------------------
constexpr int kMaxDevices = 8;

int device_count() {
  static const int n = [] {
    const char* v = std::getenv("FAKE_CUDA_DEVICES");
    const int parsed = v && *v ? std::atoi(v) : 1;
    return parsed < 1 ? 1 : (parsed > kMaxDevices ? kMaxDevices : parsed);
  }();
  return n;
}

// A device's primary context is the handle 0x1 + its ordinal.
CUcontext context_of(int device) { return reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(device) + 1); }
int device_of_context(CUcontext c) {
  const auto v = reinterpret_cast<std::uintptr_t>(c);
  return v >= 1 && v <= static_cast<std::uintptr_t>(device_count()) ? static_cast<int>(v - 1) : -1;
}

// Each thread's context stack; the top is current. Starts with device 0's.
constexpr int kStackDepth = 16;
thread_local CUcontext t_stack[kStackDepth] = {reinterpret_cast<CUcontext>(1)};
thread_local int t_depth = 1;

CUcontext current_context() { return t_depth > 0 ? t_stack[t_depth - 1] : nullptr; }
int current_device() { return device_of_context(current_context()); }

// peer[a][b]: device a's kernels may use device b's cuMemAlloc memory (cuCtxEnablePeerAccess
// made in a context of a, naming one of b).
bool g_peer[kMaxDevices][kMaxDevices];

void trace(const char* format, ...) __attribute__((format(printf, 1, 2)));
void trace(const char* format, ...) {
  const char* path = std::getenv("FAKE_CUDA_TRACE");
  if (!path || !*path) return;
  char line[256];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(line, sizeof line - 1, format, ap);
  va_end(ap);
  if (n < 0) return;
  if (n > static_cast<int>(sizeof line) - 2) n = static_cast<int>(sizeof line) - 2;
  line[n++] = '\n';
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t written = write(fd, line, static_cast<size_t>(n));
  close(fd);
}

// How often each VMM call was made, written to FAKE_CUDA_STATS at exit.
enum Call { kReserve, kAddressFree, kCreate, kRelease, kMap, kUnmap, kSetAccess, kCtxSynchronize, kCallCount };
const char* const kCallNames[kCallCount] = {"cuMemAddressReserve", "cuMemAddressFree", "cuMemCreate",
                                            "cuMemRelease",        "cuMemMap",         "cuMemUnmap",
                                            "cuMemSetAccess",      "cuCtxSynchronize"};
unsigned long g_calls[kCallCount];

void count(Call c) { __atomic_add_fetch(&g_calls[c], 1, __ATOMIC_RELAXED); }

__attribute__((destructor)) void write_stats() {
  const char* path = std::getenv("FAKE_CUDA_STATS");
  if (!path || !*path) return;
  if (FILE* f = std::fopen(path, "w")) {
    for (int i = 0; i < kCallCount; ++i) std::fprintf(f, "%s=%lu\n", kCallNames[i], g_calls[i]);
    std::fclose(f);
  }
}

// Physical memory: one memfd per handle; released handles refuse to be mapped.
struct Handle {
  int fd = -1;
  std::uint64_t bytes = 0;
  bool released = false;
  std::uint64_t handle_types = 0;  // requestedHandleTypes
  int references = 1;              // cuMemRetainAllocationHandle adds one, cuMemRelease takes one
  int device = 0;                  // where the memory lives (the allocation's location)
};
constexpr int kMaxHandles = 4096;
Handle g_handles[kMaxHandles];
int g_handle_count = 0;
std::uint64_t g_unreleased_bytes = 0;

Handle* handle_of(CUmemGenericAllocationHandle h) {
  if (h == 0 || h > static_cast<CUmemGenericAllocationHandle>(g_handle_count)) return nullptr;
  Handle* p = &g_handles[h - 1];
  return p->released ? nullptr : p;
}

std::uint64_t memory_limit() {
  const char* v = std::getenv("FAKE_CUDA_MEMORY_KB");
  return v && *v ? std::strtoull(v, nullptr, 10) * 1024 : ~0ull;
}

// Blocks handed out by cuMemAlloc and friends, to refuse a second free like the driver.
constexpr int kMaxBlocks = 4096;
void* g_blocks[kMaxBlocks];
std::uint64_t g_block_bytes[kMaxBlocks];
bool g_live[kMaxBlocks];
int g_block_device[kMaxBlocks];
int g_block_count = 0;

// No device has a terabyte: larger requests run out of memory, as a driver's do (and
// bytes + 512 cannot wrap).
constexpr size_t kMaxBlockBytes = size_t{1} << 40;

// The blocks lie in one shared memory file (address space reserved, pages made as they
// are touched), so that another process can map one (legacy CUDA IPC); past its end,
// on the heap (such a block cannot be handed over).
constexpr std::uint64_t kArenaBytes = std::uint64_t{16} << 30;
int g_arena_fd = -1;
unsigned char* g_arena = nullptr;
std::uint64_t g_arena_used = 256;  // slack before the first block too: an underrun stays silent

void* arena_block(std::uint64_t bytes) {
  if (!g_arena) {
    const int fd = memfd_create("fake-cuda-device-memory", MFD_CLOEXEC);
    if (fd < 0) return nullptr;
    void* m = MAP_FAILED;
    if (ftruncate(fd, static_cast<off_t>(kArenaBytes)) == 0)
      m = mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (m == MAP_FAILED) {
      close(fd);
      return nullptr;
    }
    g_arena_fd = fd;
    g_arena = static_cast<unsigned char*>(m);
  }
  const std::uint64_t at = (g_arena_used + 255) / 256 * 256;
  if (at > kArenaBytes || kArenaBytes - at < bytes) return nullptr;
  g_arena_used = at + bytes;
  return g_arena + at;
}

// Off the arena, 256 bytes of padding on each side: a small overrun or underrun lands in
// memory of the block, silent as in a driver's 2 MiB granule, never in the heap's own
// bookkeeping (a newer glibc aborts on that, which would make a native run crash).
constexpr size_t kBlockPad = 256;

void* allocate_block(size_t bytes) {
  if (g_block_count == kMaxBlocks || bytes > kMaxBlockBytes) return nullptr;
  void* p = arena_block(bytes + kBlockPad);
  if (p) {
    std::memset(p, 0, bytes + kBlockPad);
  } else {
    void* raw = nullptr;
    if (posix_memalign(&raw, 256, bytes + 2 * kBlockPad) != 0) return nullptr;
    std::memset(raw, 0, bytes + 2 * kBlockPad);
    p = static_cast<char*>(raw) + kBlockPad;
  }
  g_blocks[g_block_count] = p;
  g_block_bytes[g_block_count] = bytes;
  g_block_device[g_block_count] = current_device() < 0 ? 0 : current_device();
  g_live[g_block_count++] = true;
  return p;
}

// The live block starting at `p`: its index, or -1.
int block_at(std::uint64_t p) {
  for (int i = 0; i < g_block_count; ++i)
    if (g_live[i] && reinterpret_cast<std::uint64_t>(g_blocks[i]) == p) return i;
  return -1;
}

// What cuMemMap mapped where (cuMemRetainAllocationHandle, cuMemGetAddressRange).
struct Mapping {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  CUmemGenericAllocationHandle handle = 0;
  unsigned access = 0;  // bit d: device d may read and write it (cuMemSetAccess)
};
constexpr int kMaxMappings = 4096;
Mapping g_mappings[kMaxMappings];
int g_mapping_count = 0;

const Mapping* mapping_holding(std::uint64_t p) {
  for (int i = 0; i < g_mapping_count; ++i)
    if (p >= g_mappings[i].address && p - g_mappings[i].address < g_mappings[i].bytes) return &g_mappings[i];
  return nullptr;
}

// Never given back to the heap: a use after free stays silent, as in a driver's pool.
CUresult free_block(void* p) {
  for (int i = 0; i < g_block_count; ++i) {
    if (g_blocks[i] == p && g_live[i]) {
      g_live[i] = false;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

struct FakeFunction {
  const char* name;
  int param_count;
  size_t param_offset[3];
  size_t param_size[3];
};

const FakeFunction kFillBytes = {"_Z10fill_bytesPhmi", 3, {0, 8, 16}, {8, 8, 4}};

// ---- Core dumps ------------------------------------------------------------------
// The driver's name pattern, expanded: %p pid, %h host name, %t seconds, %% a percent.
void expand_pattern(const char* pattern, char* out, size_t size) {
  size_t n = 0;
  for (const char* p = pattern; *p && n + 1 < size; ++p) {
    char piece[256] = {};
    if (p[0] == '%' && p[1]) {
      ++p;
      if (*p == 'p') std::snprintf(piece, sizeof piece, "%d", static_cast<int>(getpid()));
      else if (*p == 'h') gethostname(piece, sizeof piece - 1);
      else if (*p == 't') std::snprintf(piece, sizeof piece, "%ld", static_cast<long>(time(nullptr)));
      else piece[0] = *p;
    } else {
      piece[0] = *p;
    }
    for (const char* q = piece; *q && n + 1 < size; ++q) out[n++] = *q;
  }
  out[n] = 0;
}

// Copies `from` to CUDA_COREDUMP_FILE, in `parts` writes `pause_ms` apart.
void write_dump(const char* from, int parts, int pause_ms) {
  const char* pattern = std::getenv("CUDA_COREDUMP_FILE");
  if (!from || !*from || !pattern || !*pattern) return;
  char path[4096];
  expand_pattern(pattern, path, sizeof path);
  FILE* in = std::fopen(from, "rb");
  if (!in) return;
  std::fseek(in, 0, SEEK_END);
  const long size = std::ftell(in);
  std::fseek(in, 0, SEEK_SET);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0 && size > 0) {
    static char buffer[1 << 16];
    long done = 0;
    for (int part = 1; part <= parts; ++part) {
      const long until = part == parts ? size : size / parts * part;
      while (done < until) {
        const size_t want = static_cast<size_t>(until - done) < sizeof buffer ? static_cast<size_t>(until - done)
                                                                              : sizeof buffer;
        const size_t got = std::fread(buffer, 1, want, in);
        if (got == 0 || write(fd, buffer, got) != static_cast<ssize_t>(got)) break;
        done += static_cast<long>(got);
      }
      if (part < parts) usleep(static_cast<useconds_t>(pause_ms) * 1000);
    }
  }
  if (fd >= 0) close(fd);
  std::fclose(in);
}

// A fault the program was not told of at its launch (FAKE_CUDA_ASYNC_FAULT): every later
// synchronize returns it, as the driver's sticky errors.
bool g_sticky_fault = false;

bool dumps_armed() { return env_on("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") && std::getenv("FAKE_CUDA_COREDUMP_FROM"); }

// An exception, as the driver reports it with dumps armed.
CUresult exception() {
  if (!dumps_armed()) return CUDA_ERROR_ILLEGAL_ADDRESS;
  write_dump(std::getenv("FAKE_CUDA_COREDUMP_FROM"), 1, 0);
  const char* flags = std::getenv("CUDA_COREDUMP_GENERATION_FLAGS");
  if (!flags || !std::strstr(flags, "skip_abort")) abort();
  return env_on("FAKE_CUDA_HIDE_FAULT") ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_ADDRESS;
}

void* pipe_reader(void* arg) {
  const char* path = static_cast<const char*>(arg);
  const char* need_text = std::getenv("FAKE_CUDA_PIPE_BYTES");
  const long need = need_text && *need_text ? std::strtol(need_text, nullptr, 10) : 1;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);  // waits for a writer
  if (fd < 0) return nullptr;
  long got = 0;
  char buffer[65536];
  while (got < need) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    got += n;
  }
  if (got >= need) {
    write_dump(std::getenv("FAKE_CUDA_HANG_DUMP_FROM"), 2, 300);
    abort();
  }
  close(fd);
  return nullptr;
}

// The user-triggered pipe, made once.
void arm_pipe() {
  static bool done = false;
  if (done) return;
  done = true;
  const char* pattern = std::getenv("CUDA_COREDUMP_PIPE");
  if (!env_on("CUDA_ENABLE_USER_TRIGGERED_COREDUMP") || !pattern || !*pattern) return;
  static char path[4096];
  expand_pattern(pattern, path, sizeof path);
  if (mkfifo(path, 0600) != 0) return;
  pthread_t t;
  if (pthread_create(&t, nullptr, pipe_reader, path) == 0) pthread_detach(t);
}

sigjmp_buf g_fault_jump;
std::uint64_t g_fault_address = 0;
void on_kernel_fault(int, siginfo_t* info, void*) {
  g_fault_address = reinterpret_cast<std::uint64_t>(info->si_addr);
  siglongjmp(g_fault_jump, 1);
}

// The kernel log's line for a fault at `address` in this process, as the driver has it
// written (an MMU fault names the 4 KiB page), appended to FAKE_CUDA_KMSG.
void write_xid(std::uint64_t address) {
  const char* path = std::getenv("FAKE_CUDA_KMSG");
  if (!path || !*path) return;
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  const unsigned long long us = static_cast<unsigned long long>(t.tv_sec) * 1000000ull + t.tv_nsec / 1000;
  char name[32] = "program";
  if (FILE* comm = std::fopen("/proc/self/comm", "r")) {
    if (std::fgets(name, sizeof name, comm)) name[std::strcspn(name, "\n")] = 0;
    std::fclose(comm);
  }
  const std::uint64_t page = address & ~std::uint64_t{0xfff};
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f,
                 "4,%llu,%llu,-;NVRM: Xid (PCI:0000:00:06): 31, pid=%d, name=%s, channel 0x00000008, intr 00000000. "
                 "MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x%llx_%08llx. Fault is of type FAULT_PDE "
                 "ACCESS_TYPE_VIRT_WRITE\n",
                 us, us, static_cast<int>(getpid()), name, static_cast<unsigned long long>(page >> 32),
                 static_cast<unsigned long long>(page & 0xffffffffull));
    std::fclose(f);
  }
}

// Whether a kernel on the current device may touch [p, p + n): memory of another device
// only as the driver allows it (cuMemAlloc's after cuCtxEnablePeerAccess, VMM memory
// where cuMemSetAccess granted the device); memory the driver never made (host memory,
// a guard) is left to the host's own protection.
bool device_may_touch(std::uint64_t p, std::uint64_t n) {
  Locked lock;
  const int self = current_device();
  if (self < 0) return false;
  for (int i = 0; i < g_block_count; ++i) {
    const auto begin = reinterpret_cast<std::uint64_t>(g_blocks[i]);
    if (!g_live[i] || p < begin || p - begin >= g_block_bytes[i]) continue;
    const int owner = g_block_device[i];
    return owner == self || g_peer[self][owner];
  }
  for (int i = 0; i < g_mapping_count; ++i) {
    const Mapping& m = g_mappings[i];
    if (p + (n ? n - 1 : 0) < m.address || p >= m.address + m.bytes) continue;
    if ((m.access & (1u << self)) == 0) return false;
  }
  return true;
}

CUresult run(CUfunction f, void** params, void** extra) {
  arm_pipe();
  if (reinterpret_cast<const FakeFunction*>(f) != &kFillBytes) return CUDA_ERROR_INVALID_HANDLE;
  if (env_on("FAKE_CUDA_HANG"))
    for (;;) pause();
  if (env_on("FAKE_CUDA_FAULT")) return exception();
  unsigned char* p = nullptr;
  unsigned long n = 0;
  int value = 0;
  if (params) {
    std::memcpy(&p, params[0], sizeof p);
    std::memcpy(&n, params[1], sizeof n);
    std::memcpy(&value, params[2], sizeof value);
  } else if (extra && extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
    const auto* buffer = static_cast<const unsigned char*>(extra[1]);
    std::memcpy(&p, buffer + 0, sizeof p);
    std::memcpy(&n, buffer + 8, sizeof n);
    std::memcpy(&value, buffer + 16, sizeof value);
  } else {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!device_may_touch(reinterpret_cast<std::uint64_t>(p), n)) {
    trace("kernel on device %d: no access to %p", current_device(), static_cast<void*>(p));
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  const bool kernel_log = std::getenv("FAKE_CUDA_KMSG") && *std::getenv("FAKE_CUDA_KMSG");
  const bool async_fault = env_on("FAKE_CUDA_ASYNC_FAULT");
  if (!dumps_armed() && !kernel_log && !async_fault) {
    std::memset(p, value, n);
    return CUDA_SUCCESS;
  }
  // A guard touched while the kernel runs is an exception, not the process's death.
  struct sigaction caught {}, old_segv {}, old_bus {};
  caught.sa_sigaction = on_kernel_fault;
  sigemptyset(&caught.sa_mask);
  caught.sa_flags = SA_NODEFER | SA_SIGINFO;
  sigaction(SIGSEGV, &caught, &old_segv);
  sigaction(SIGBUS, &caught, &old_bus);
  const bool faulted = sigsetjmp(g_fault_jump, 1) != 0;
  if (!faulted) std::memset(p, value, n);
  sigaction(SIGSEGV, &old_segv, nullptr);
  sigaction(SIGBUS, &old_bus, nullptr);
  if (faulted) write_xid(g_fault_address);
  if (faulted && async_fault && !dumps_armed()) {
    __atomic_store_n(&g_sticky_fault, true, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
  }
  return faulted ? exception() : CUDA_SUCCESS;
}

}  // namespace

FAKE_EXPORT CUresult fake_init(unsigned int) __asm__("cuInit");
CUresult fake_init(unsigned int) {
  arm_pipe();
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult fake_driver_get_version(int*) __asm__("cuDriverGetVersion");
CUresult fake_driver_get_version(int* v) {
  *v = 13000;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult fake_mem_alloc_v1(unsigned int*, unsigned int) __asm__("cuMemAlloc");
CUresult fake_mem_alloc_v1(unsigned int*, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }

FAKE_EXPORT CUresult fake_mem_alloc(CUdeviceptr*, size_t) __asm__("cuMemAlloc_v2");
CUresult fake_mem_alloc(CUdeviceptr* p, size_t bytes) {
  if (!p || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  Locked lock;
  void* b = allocate_block(bytes);
  if (!b) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(b);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult fake_mem_alloc_pitch(CUdeviceptr*, size_t*, size_t, size_t, unsigned int)
    __asm__("cuMemAllocPitch_v2");
CUresult fake_mem_alloc_pitch(CUdeviceptr* p, size_t* pitch, size_t width, size_t height, unsigned int) {
  *pitch = (width + 511) / 512 * 512;
  return fake_mem_alloc(p, *pitch * height);
}

FAKE_EXPORT CUresult fake_mem_free(CUdeviceptr) __asm__("cuMemFree_v2");
CUresult fake_mem_free(CUdeviceptr p) {
  Locked lock;
  return free_block(reinterpret_cast<void*>(p));
}

FAKE_EXPORT CUresult fake_mem_alloc_async(CUdeviceptr*, size_t, CUstream) __asm__("cuMemAllocAsync");
CUresult fake_mem_alloc_async(CUdeviceptr* p, size_t bytes, CUstream) { return fake_mem_alloc(p, bytes); }
FAKE_EXPORT CUresult fake_mem_alloc_async_ptsz(CUdeviceptr*, size_t, CUstream) __asm__("cuMemAllocAsync_ptsz");
CUresult fake_mem_alloc_async_ptsz(CUdeviceptr* p, size_t bytes, CUstream) { return fake_mem_alloc(p, bytes); }
FAKE_EXPORT CUresult fake_mem_free_async(CUdeviceptr, CUstream) __asm__("cuMemFreeAsync");
CUresult fake_mem_free_async(CUdeviceptr p, CUstream) { return fake_mem_free(p); }
FAKE_EXPORT CUresult fake_mem_free_async_ptsz(CUdeviceptr, CUstream) __asm__("cuMemFreeAsync_ptsz");
CUresult fake_mem_free_async_ptsz(CUdeviceptr p, CUstream) { return fake_mem_free(p); }

FAKE_EXPORT CUresult fake_mem_alloc_managed(CUdeviceptr*, size_t, unsigned int) __asm__("cuMemAllocManaged");
CUresult fake_mem_alloc_managed(CUdeviceptr* p, size_t bytes, unsigned int) { return fake_mem_alloc(p, bytes); }

FAKE_EXPORT CUresult fake_mem_alloc_host(void**, size_t) __asm__("cuMemAllocHost_v2");
CUresult fake_mem_alloc_host(void** p, size_t bytes) {
  Locked lock;
  *p = allocate_block(bytes);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FAKE_EXPORT CUresult fake_mem_free_host(void*) __asm__("cuMemFreeHost");
CUresult fake_mem_free_host(void* p) {
  Locked lock;
  return free_block(p);
}

FAKE_EXPORT CUresult fake_memset_d8(CUdeviceptr, unsigned char, size_t) __asm__("cuMemsetD8_v2");
CUresult fake_memset_d8(CUdeviceptr p, unsigned char value, size_t n) {
  std::memset(reinterpret_cast<void*>(p), value, n);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_memcpy_dtoh(void*, CUdeviceptr, size_t) __asm__("cuMemcpyDtoH_v2");
CUresult fake_memcpy_dtoh(void* dst, CUdeviceptr src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

// Context, stream and device queries: FAKE_CUDA_DEVICES devices, one primary context each,
// a context stack per thread.
FAKE_EXPORT CUresult fake_ctx_get_device(CUdevice*) __asm__("cuCtxGetDevice");
CUresult fake_ctx_get_device(CUdevice* d) {
  const int device = current_device();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  *d = device;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ctx_get_current(CUcontext*) __asm__("cuCtxGetCurrent");
CUresult fake_ctx_get_current(CUcontext* c) {
  *c = current_context();
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ctx_set_current(CUcontext) __asm__("cuCtxSetCurrent");
CUresult fake_ctx_set_current(CUcontext c) {
  if (c && device_of_context(c) < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (t_depth == 0) {
    if (!c) return CUDA_SUCCESS;
    t_depth = 1;
  }
  t_stack[t_depth - 1] = c;
  if (!c) t_depth = 0;
  trace("cuCtxSetCurrent ctx=%p", static_cast<void*>(c));
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ctx_push_current(CUcontext) __asm__("cuCtxPushCurrent_v2");
CUresult fake_ctx_push_current(CUcontext c) {
  if (device_of_context(c) < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (t_depth == kStackDepth) return CUDA_ERROR_OUT_OF_MEMORY;
  t_stack[t_depth++] = c;
  trace("cuCtxPushCurrent ctx=%p", static_cast<void*>(c));
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ctx_pop_current(CUcontext*) __asm__("cuCtxPopCurrent_v2");
CUresult fake_ctx_pop_current(CUcontext* c) {
  if (t_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  CUcontext top = t_stack[--t_depth];
  if (c) *c = top;
  trace("cuCtxPopCurrent ctx=%p", static_cast<void*>(top));
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_primary_ctx_retain(CUcontext*, CUdevice) __asm__("cuDevicePrimaryCtxRetain");
CUresult fake_primary_ctx_retain(CUcontext* c, CUdevice d) {
  if (!c || d < 0 || d >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  *c = context_of(d);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ctx_synchronize() __asm__("cuCtxSynchronize");
CUresult fake_ctx_synchronize() {
  count(kCtxSynchronize);
  if (!current_context()) return CUDA_ERROR_INVALID_CONTEXT;
  trace("cuCtxSynchronize ctx=%p", static_cast<void*>(current_context()));
  return __atomic_load_n(&g_sticky_fault, __ATOMIC_RELAXED) ? CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_SUCCESS;
}
// Peer access between contexts (cudaDeviceEnablePeerAccess): the current context's device
// may then use the peer context's device's cuMemAlloc memory. VMM memory is not affected
// (its access is cuMemSetAccess's alone), as with the driver.
FAKE_EXPORT CUresult fake_ctx_enable_peer_access(CUcontext, unsigned int) __asm__("cuCtxEnablePeerAccess");
CUresult fake_ctx_enable_peer_access(CUcontext peer, unsigned int flags) {
  const int self = current_device(), owner = device_of_context(peer);
  if (self < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (owner < 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (owner == self) return CUDA_ERROR_INVALID_DEVICE;
  Locked lock;
  if (g_peer[self][owner]) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  g_peer[self][owner] = true;
  trace("cuCtxEnablePeerAccess device=%d peer=%d", self, owner);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ctx_disable_peer_access(CUcontext) __asm__("cuCtxDisablePeerAccess");
CUresult fake_ctx_disable_peer_access(CUcontext peer) {
  const int self = current_device(), owner = device_of_context(peer);
  if (self < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (owner < 0) return CUDA_ERROR_INVALID_VALUE;
  Locked lock;
  if (!g_peer[self][owner]) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  g_peer[self][owner] = false;
  trace("cuCtxDisablePeerAccess device=%d peer=%d", self, owner);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_device_can_access_peer(int*, CUdevice, CUdevice) __asm__("cuDeviceCanAccessPeer");
CUresult fake_device_can_access_peer(int* can, CUdevice d, CUdevice peer) {
  if (!can || d < 0 || d >= device_count() || peer < 0 || peer >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  *can = d != peer;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_stream_synchronize(CUstream) __asm__("cuStreamSynchronize");
CUresult fake_stream_synchronize(CUstream) { return CUDA_SUCCESS; }
FAKE_EXPORT CUresult fake_stream_is_capturing(CUstream, CUstreamCaptureStatus*) __asm__("cuStreamIsCapturing");
CUresult fake_stream_is_capturing(CUstream, CUstreamCaptureStatus* s) {
  *s = env_on("FAKE_CUDA_CAPTURING") ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_stream_get_ctx(CUstream, CUcontext*) __asm__("cuStreamGetCtx");
CUresult fake_stream_get_ctx(CUstream, CUcontext* c) { return fake_ctx_get_current(c); }
FAKE_EXPORT CUresult fake_device_get_count(int*) __asm__("cuDeviceGetCount");
CUresult fake_device_get_count(int* n) {
  *n = device_count();
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_device_get_attribute(int*, CUdevice_attribute, CUdevice) __asm__("cuDeviceGetAttribute");
CUresult fake_device_get_attribute(int* v, CUdevice_attribute a, CUdevice) {
  *v = a == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED && !env_on("FAKE_CUDA_NO_FD_HANDLES");
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_device_get_uuid(CUuuid*, CUdevice) __asm__("cuDeviceGetUuid_v2");
CUresult fake_device_get_uuid(CUuuid* u, CUdevice d) {
  if (!u || d < 0 || d > 0xff) return CUDA_ERROR_INVALID_VALUE;
  const unsigned char bytes[16] = {0xfa, 0x4e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, static_cast<unsigned char>(d)};
  std::memcpy(u->bytes, bytes, sizeof bytes);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_device_get_pci_bus_id(char*, int, CUdevice) __asm__("cuDeviceGetPCIBusId");
CUresult fake_device_get_pci_bus_id(char* id, int len, CUdevice d) {
  if (!id || len < 13 || d < 0 || d > 0xf0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(id, static_cast<std::size_t>(len), "0000:00:%02X.0", 6 + d);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_device_get_default_mem_pool(CUmemoryPool*, CUdevice) __asm__("cuDeviceGetDefaultMemPool");
CUresult fake_device_get_default_mem_pool(CUmemoryPool* p, CUdevice) {
  *p = reinterpret_cast<CUmemoryPool>(0x100);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_device_get_mem_pool(CUmemoryPool*, CUdevice) __asm__("cuDeviceGetMemPool");
CUresult fake_device_get_mem_pool(CUmemoryPool* p, CUdevice d) { return fake_device_get_default_mem_pool(p, d); }

// Virtual memory management: reservations are PROT_NONE mappings, "physical" memory is
// whatever an anonymous mapping gives, access is mprotect.
FAKE_EXPORT CUresult fake_mem_get_allocation_granularity(size_t*, const CUmemAllocationProp*,
                                                         CUmemAllocationGranularity_flags)
    __asm__("cuMemGetAllocationGranularity");
CUresult fake_mem_get_allocation_granularity(size_t* g, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) {
  *g = granularity();
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_address_reserve(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long)
    __asm__("cuMemAddressReserve");
CUresult fake_mem_address_reserve(CUdeviceptr* p, size_t size, size_t, CUdeviceptr, unsigned long long) {
  count(kReserve);
  const std::uint64_t g = granularity();
  void* raw = mmap(nullptr, size + g, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto begin = reinterpret_cast<std::uint64_t>(raw);
  const std::uint64_t aligned = (begin + g - 1) / g * g;
  if (aligned > begin) munmap(raw, aligned - begin);
  if (aligned + size < begin + size + g) munmap(reinterpret_cast<void*>(aligned + size), begin + g - aligned);
  *p = aligned;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_address_free(CUdeviceptr, size_t) __asm__("cuMemAddressFree");
CUresult fake_mem_address_free(CUdeviceptr p, size_t size) {
  count(kAddressFree);
  return munmap(reinterpret_cast<void*>(p), size) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE_EXPORT CUresult fake_mem_create(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                                     unsigned long long) __asm__("cuMemCreate");
CUresult fake_mem_create(CUmemGenericAllocationHandle* h, size_t size, const CUmemAllocationProp* prop,
                         unsigned long long) {
  count(kCreate);
  Locked lock;
  if (prop->location.id < 0 || prop->location.id >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  if (env_on("FAKE_CUDA_FAIL_CREATE")) return CUDA_ERROR_OUT_OF_MEMORY;
  if (size == 0 || size % granularity() != 0) return CUDA_ERROR_INVALID_VALUE;
  if (g_unreleased_bytes + size > memory_limit() || g_handle_count == kMaxHandles) return CUDA_ERROR_OUT_OF_MEMORY;
  const int fd = memfd_create("fake-cuda-memory", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (fd >= 0) close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  g_handles[g_handle_count] =
      Handle{fd, size, false, static_cast<std::uint64_t>(prop->requestedHandleTypes), 1, prop->location.id};
  *h = static_cast<CUmemGenericAllocationHandle>(++g_handle_count);
  g_unreleased_bytes += size;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_release(CUmemGenericAllocationHandle) __asm__("cuMemRelease");
// The memory stays while it is mapped (the mapping holds the file), as with the driver.
CUresult fake_mem_release(CUmemGenericAllocationHandle h) {
  count(kRelease);
  Locked lock;
  Handle* p = handle_of(h);
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (--p->references > 0) return CUDA_SUCCESS;  // a retained reference remains
  close(p->fd);
  p->released = true;
  g_unreleased_bytes -= p->bytes;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_map(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)
    __asm__("cuMemMap");
CUresult fake_mem_map(CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h, unsigned long long) {
  count(kMap);
  Locked lock;
  const Handle* handle = handle_of(h);
  if (!handle || offset != 0 || size != handle->bytes) return CUDA_ERROR_INVALID_VALUE;
  if (p % granularity() != 0 || size % granularity() != 0) return CUDA_ERROR_INVALID_VALUE;
  void* m = mmap(reinterpret_cast<void*>(p), size, PROT_NONE, MAP_SHARED | MAP_FIXED, handle->fd, 0);
  if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  if (g_mapping_count < kMaxMappings) g_mappings[g_mapping_count++] = Mapping{p, size, h, 0};
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_unmap(CUdeviceptr, size_t) __asm__("cuMemUnmap");
CUresult fake_mem_unmap(CUdeviceptr p, size_t size) {
  count(kUnmap);
  if (env_on("FAKE_CUDA_FAIL_UNMAP")) return CUDA_ERROR_INVALID_VALUE;
  Locked lock;
  if (const Mapping* m = mapping_holding(p)) {
    const Handle* handle = handle_of(m->handle);
    trace("cuMemUnmap %#llx device=%d", static_cast<unsigned long long>(p), handle ? handle->device : -1);
  }
  void* m = mmap(reinterpret_cast<void*>(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED) return CUDA_ERROR_INVALID_VALUE;
  int kept = 0;
  for (int i = 0; i < g_mapping_count; ++i)
    if (g_mappings[i].address < p || g_mappings[i].address >= p + size) g_mappings[kept++] = g_mappings[i];
  g_mapping_count = kept;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_set_access(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t)
    __asm__("cuMemSetAccess");
// Access per device, as the descriptors say (PROT_NONE takes a device's away); the pages
// are readable on the host while any device has access.
CUresult fake_mem_set_access(CUdeviceptr p, size_t size, const CUmemAccessDesc* desc, size_t descriptors) {
  count(kSetAccess);
  if (descriptors == 0 || !desc) return CUDA_ERROR_INVALID_VALUE;
  Locked lock;
  unsigned grant = 0, revoke = 0;
  for (size_t i = 0; i < descriptors; ++i) {
    const int d = desc[i].location.id;
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || d < 0 || d >= device_count())
      return CUDA_ERROR_INVALID_DEVICE;
    if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE) revoke |= 1u << d;
    else grant |= 1u << d;
    trace("cuMemSetAccess %#llx device=%d %s", static_cast<unsigned long long>(p), d,
          desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE ? "none" : "readwrite");
  }
  unsigned access = 0;
  bool mapped = false;
  for (int i = 0; i < g_mapping_count; ++i) {
    Mapping& m = g_mappings[i];
    if (m.address < p || m.address >= p + size) continue;
    m.access = (m.access | grant) & ~revoke;
    access |= m.access;
    mapped = true;
  }
  if (!mapped) return CUDA_ERROR_INVALID_VALUE;
  const int prot = access ? PROT_READ | PROT_WRITE : PROT_NONE;
  return mprotect(reinterpret_cast<void*>(p), size, prot) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// CUDA IPC. The legacy handle names the block in the exporter's shared memory file: the
// importer maps the block's pages from /proc/<pid>/fd/<fd> (the same user only, as the
// driver's). VMM memory has no legacy handle: CUDA_ERROR_INVALID_VALUE, as the driver.
namespace {

constexpr std::uint64_t kLegacyMagic = 0x435049474341464bull;  // "KFACGIPC"

struct LegacyHandle {
  std::uint64_t magic;
  std::int32_t pid;
  std::int32_t fd;
  std::uint64_t offset;  // of the block in the file
  std::uint64_t bytes;
  std::uint64_t reserved[4];
};
static_assert(sizeof(LegacyHandle) == sizeof(CUipcMemHandle));

struct LegacyImport {
  std::int32_t pid = 0;       // the handle's exporter and block
  std::uint64_t offset = 0;
  std::uint64_t address = 0;  // the block, as the importer sees it
  std::uint64_t bytes = 0;
  void* map = nullptr;        // the pages mapped for it
  std::uint64_t map_bytes = 0;
  int references = 0;         // opened again: the same address, one reference more
};
constexpr int kMaxImports = 256;
LegacyImport g_imports[kMaxImports];
int g_import_count = 0;

}  // namespace

FAKE_EXPORT CUresult fake_ipc_get_mem_handle(CUipcMemHandle*, CUdeviceptr) __asm__("cuIpcGetMemHandle");
CUresult fake_ipc_get_mem_handle(CUipcMemHandle* out, CUdeviceptr p) {
  Locked lock;
  const int i = block_at(p);
  if (!out || i < 0 || !g_arena || static_cast<unsigned char*>(g_blocks[i]) < g_arena ||
      static_cast<unsigned char*>(g_blocks[i]) >= g_arena + kArenaBytes)
    return CUDA_ERROR_INVALID_VALUE;
  LegacyHandle h{};
  h.magic = kLegacyMagic;
  h.pid = static_cast<std::int32_t>(getpid());
  h.fd = g_arena_fd;
  h.offset = static_cast<std::uint64_t>(static_cast<unsigned char*>(g_blocks[i]) - g_arena);
  h.bytes = g_block_bytes[i];
  std::memcpy(out, &h, sizeof h);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ipc_open_mem_handle(CUdeviceptr*, CUipcMemHandle, unsigned int)
    __asm__("cuIpcOpenMemHandle_v2");
CUresult fake_ipc_open_mem_handle(CUdeviceptr* out, CUipcMemHandle handle, unsigned int) {
  Locked lock;
  LegacyHandle h;
  std::memcpy(&h, &handle, sizeof h);
  if (!out || h.magic != kLegacyMagic || g_import_count == kMaxImports) return CUDA_ERROR_INVALID_VALUE;
  if (h.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;  // not in the exporting process
  for (int i = 0; i < g_import_count; ++i) {
    if (g_imports[i].pid != h.pid || g_imports[i].offset != h.offset) continue;
    ++g_imports[i].references;
    *out = g_imports[i].address;
    return CUDA_SUCCESS;
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", h.pid, h.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t first = h.offset / page * page;
  const std::uint64_t map_bytes = (h.offset + h.bytes + page - 1) / page * page - first;
  void* m = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(first));
  close(fd);
  if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const std::uint64_t address = reinterpret_cast<std::uint64_t>(m) + (h.offset - first);
  g_imports[g_import_count++] = LegacyImport{h.pid, h.offset, address, h.bytes, m, map_bytes, 1};
  *out = address;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_ipc_close_mem_handle(CUdeviceptr) __asm__("cuIpcCloseMemHandle");
CUresult fake_ipc_close_mem_handle(CUdeviceptr p) {
  Locked lock;
  for (int i = 0; i < g_import_count; ++i) {
    if (g_imports[i].address != p) continue;
    if (--g_imports[i].references > 0) return CUDA_SUCCESS;
    munmap(g_imports[i].map, g_imports[i].map_bytes);
    g_imports[i] = g_imports[--g_import_count];
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// Shareable handles of VMM memory: a POSIX file descriptor, the handle's memfd.
FAKE_EXPORT CUresult fake_mem_export_to_shareable_handle(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                                                         unsigned long long) __asm__("cuMemExportToShareableHandle");
CUresult fake_mem_export_to_shareable_handle(void* out, CUmemGenericAllocationHandle h, CUmemAllocationHandleType type,
                                             unsigned long long) {
  Locked lock;
  const Handle* handle = handle_of(h);
  if (!out || !handle) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  // Memory made without the type cannot be exported as it.
  if ((handle->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) return CUDA_ERROR_INVALID_VALUE;
  const int fd = fcntl(handle->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(out) = fd;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_import_from_shareable_handle(CUmemGenericAllocationHandle*, void*,
                                                           CUmemAllocationHandleType)
    __asm__("cuMemImportFromShareableHandle");
CUresult fake_mem_import_from_shareable_handle(CUmemGenericAllocationHandle* h, void* os_handle,
                                               CUmemAllocationHandleType type) {
  Locked lock;
  if (!h || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  const int given = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
  struct stat st {};
  if (fstat(given, &st) != 0 || st.st_size <= 0 || static_cast<std::uint64_t>(st.st_size) % granularity() != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (g_handle_count == kMaxHandles) return CUDA_ERROR_OUT_OF_MEMORY;
  const int fd = fcntl(given, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  g_handles[g_handle_count] = Handle{fd, size, false, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1};
  *h = static_cast<CUmemGenericAllocationHandle>(++g_handle_count);
  g_unreleased_bytes += size;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_retain_allocation_handle(CUmemGenericAllocationHandle*, void*)
    __asm__("cuMemRetainAllocationHandle");
CUresult fake_mem_retain_allocation_handle(CUmemGenericAllocationHandle* h, void* address) {
  Locked lock;
  const Mapping* m = mapping_holding(reinterpret_cast<std::uint64_t>(address));
  Handle* handle = m ? handle_of(m->handle) : nullptr;
  if (!h || !handle) return CUDA_ERROR_INVALID_VALUE;
  ++handle->references;
  *h = m->handle;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_mem_get_address_range(CUdeviceptr*, size_t*, CUdeviceptr) __asm__("cuMemGetAddressRange_v2");
CUresult fake_mem_get_address_range(CUdeviceptr* base, size_t* size, CUdeviceptr p) {
  Locked lock;
  std::uint64_t b = 0, n = 0;
  for (int i = 0; i < g_block_count && n == 0; ++i) {
    const auto begin = reinterpret_cast<std::uint64_t>(g_blocks[i]);
    if (g_live[i] && p >= begin && p - begin < g_block_bytes[i]) b = begin, n = g_block_bytes[i];
  }
  for (int i = 0; i < g_import_count && n == 0; ++i)
    if (p >= g_imports[i].address && p - g_imports[i].address < g_imports[i].bytes) b = g_imports[i].address, n = g_imports[i].bytes;
  if (const Mapping* m = n == 0 ? mapping_holding(p) : nullptr) b = m->address, n = m->bytes;
  if (n == 0) return CUDA_ERROR_NOT_FOUND;
  if (base) *base = b;
  if (size) *size = n;
  return CUDA_SUCCESS;
}

// Modules and launches: one kernel, run on the host.
FAKE_EXPORT CUresult fake_module_load_data(CUmodule*, const void*) __asm__("cuModuleLoadData");
CUresult fake_module_load_data(CUmodule* m, const void*) {
  *m = reinterpret_cast<CUmodule>(0x2);
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_module_get_function(CUfunction*, CUmodule, const char*) __asm__("cuModuleGetFunction");
CUresult fake_module_get_function(CUfunction* f, CUmodule, const char* name) {
  if (std::strcmp(name, "fill_bytes") != 0 && std::strcmp(name, kFillBytes.name) != 0) return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(const_cast<FakeFunction*>(&kFillBytes));
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_func_get_name(const char**, CUfunction) __asm__("cuFuncGetName");
CUresult fake_func_get_name(const char** name, CUfunction f) {
  *name = reinterpret_cast<const FakeFunction*>(f)->name;
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_func_get_param_info(CUfunction, size_t, size_t*, size_t*) __asm__("cuFuncGetParamInfo");
CUresult fake_func_get_param_info(CUfunction f, size_t i, size_t* offset, size_t* size) {
  const auto* k = reinterpret_cast<const FakeFunction*>(f);
  if (i >= static_cast<size_t>(k->param_count)) return CUDA_ERROR_INVALID_VALUE;
  *offset = k->param_offset[i];
  *size = k->param_size[i];
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult fake_launch_kernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, CUstream, void**, void**) __asm__("cuLaunchKernel");
CUresult fake_launch_kernel(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void** params, void** extra) {
  return run(f, params, extra);
}
FAKE_EXPORT CUresult fake_launch_kernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                             unsigned, CUstream, void**, void**) __asm__("cuLaunchKernel_ptsz");
CUresult fake_launch_kernel_ptsz(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 CUstream, void** params, void** extra) {
  return run(f, params, extra);
}
FAKE_EXPORT CUresult fake_launch_kernel_ex(const CUlaunchConfig*, CUfunction, void**, void**)
    __asm__("cuLaunchKernelEx");
CUresult fake_launch_kernel_ex(const CUlaunchConfig*, CUfunction f, void** params, void** extra) {
  return run(f, params, extra);
}
FAKE_EXPORT CUresult fake_tensor_map_encode_tiled(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                                  const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                                  const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill)
    __asm__("cuTensorMapEncodeTiled");
CUresult fake_tensor_map_encode_tiled(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                      const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                      CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  return CUDA_SUCCESS;
}

// cuGetProcAddress: base name, the version that introduced each variant, per-thread or not.
FAKE_EXPORT CUresult fake_exported_get_proc_address_v2(const char*, void**, int, cuuint64_t,
                                                       CUdriverProcAddressQueryResult*) __asm__("cuGetProcAddress_v2");
FAKE_EXPORT CUresult fake_exported_get_proc_address(const char*, void**, int, cuuint64_t) __asm__("cuGetProcAddress");

namespace {

// The same function under another address (a driver may answer from its own table).
template <auto Fn>
struct Internal;
template <class R, class... A, R (*Fn)(A...)>
struct Internal<Fn> {
  static R call(A... a) { return Fn(a...); }
};

struct Symbol {
  const char* base;
  int version;
  bool per_thread;
  void* exported;
  void* internal;
};

#define FAKE_SYMBOL(base, version, per_thread, fn) \
  {base, version, per_thread, reinterpret_cast<void*>(&fn), reinterpret_cast<void*>(&Internal<&fn>::call)}

const Symbol kSymbols[] = {
    FAKE_SYMBOL("cuGetProcAddress", 11030, false, fake_exported_get_proc_address),
    FAKE_SYMBOL("cuGetProcAddress", 12000, false, fake_exported_get_proc_address_v2),
    FAKE_SYMBOL("cuInit", 2000, false, fake_init),
    FAKE_SYMBOL("cuDriverGetVersion", 2020, false, fake_driver_get_version),
    FAKE_SYMBOL("cuMemAlloc", 2000, false, fake_mem_alloc_v1),
    FAKE_SYMBOL("cuMemAlloc", 3020, false, fake_mem_alloc),
    FAKE_SYMBOL("cuMemAllocPitch", 3020, false, fake_mem_alloc_pitch),
    FAKE_SYMBOL("cuMemFree", 3020, false, fake_mem_free),
    FAKE_SYMBOL("cuMemAllocAsync", 11020, false, fake_mem_alloc_async),
    FAKE_SYMBOL("cuMemAllocAsync", 11020, true, fake_mem_alloc_async_ptsz),
    FAKE_SYMBOL("cuMemFreeAsync", 11020, false, fake_mem_free_async),
    FAKE_SYMBOL("cuMemFreeAsync", 11020, true, fake_mem_free_async_ptsz),
    FAKE_SYMBOL("cuMemAllocManaged", 6000, false, fake_mem_alloc_managed),
    FAKE_SYMBOL("cuMemAllocHost", 3020, false, fake_mem_alloc_host),
    FAKE_SYMBOL("cuMemFreeHost", 2000, false, fake_mem_free_host),
    FAKE_SYMBOL("cuMemsetD8", 3020, false, fake_memset_d8),
    FAKE_SYMBOL("cuMemcpyDtoH", 3020, false, fake_memcpy_dtoh),
    FAKE_SYMBOL("cuCtxGetDevice", 2000, false, fake_ctx_get_device),
    FAKE_SYMBOL("cuCtxGetCurrent", 4000, false, fake_ctx_get_current),
    FAKE_SYMBOL("cuCtxSynchronize", 2000, false, fake_ctx_synchronize),
    FAKE_SYMBOL("cuCtxSetCurrent", 4000, false, fake_ctx_set_current),
    FAKE_SYMBOL("cuCtxPushCurrent", 4000, false, fake_ctx_push_current),
    FAKE_SYMBOL("cuCtxPopCurrent", 4000, false, fake_ctx_pop_current),
    FAKE_SYMBOL("cuDevicePrimaryCtxRetain", 7000, false, fake_primary_ctx_retain),
    FAKE_SYMBOL("cuCtxEnablePeerAccess", 4000, false, fake_ctx_enable_peer_access),
    FAKE_SYMBOL("cuCtxDisablePeerAccess", 4000, false, fake_ctx_disable_peer_access),
    FAKE_SYMBOL("cuDeviceCanAccessPeer", 4000, false, fake_device_can_access_peer),
    FAKE_SYMBOL("cuStreamSynchronize", 2000, false, fake_stream_synchronize),
    FAKE_SYMBOL("cuStreamIsCapturing", 10000, false, fake_stream_is_capturing),
    FAKE_SYMBOL("cuStreamGetCtx", 9020, false, fake_stream_get_ctx),
    FAKE_SYMBOL("cuDeviceGetCount", 2000, false, fake_device_get_count),
    FAKE_SYMBOL("cuDeviceGetAttribute", 2000, false, fake_device_get_attribute),
    FAKE_SYMBOL("cuDeviceGetUuid", 11040, false, fake_device_get_uuid),
    FAKE_SYMBOL("cuDeviceGetPCIBusId", 4010, false, fake_device_get_pci_bus_id),
    FAKE_SYMBOL("cuDeviceGetDefaultMemPool", 11020, false, fake_device_get_default_mem_pool),
    FAKE_SYMBOL("cuDeviceGetMemPool", 11020, false, fake_device_get_mem_pool),
    FAKE_SYMBOL("cuMemGetAllocationGranularity", 10020, false, fake_mem_get_allocation_granularity),
    FAKE_SYMBOL("cuMemAddressReserve", 10020, false, fake_mem_address_reserve),
    FAKE_SYMBOL("cuMemAddressFree", 10020, false, fake_mem_address_free),
    FAKE_SYMBOL("cuMemCreate", 10020, false, fake_mem_create),
    FAKE_SYMBOL("cuMemRelease", 10020, false, fake_mem_release),
    FAKE_SYMBOL("cuMemMap", 10020, false, fake_mem_map),
    FAKE_SYMBOL("cuMemUnmap", 10020, false, fake_mem_unmap),
    FAKE_SYMBOL("cuMemSetAccess", 10020, false, fake_mem_set_access),
    FAKE_SYMBOL("cuIpcGetMemHandle", 4010, false, fake_ipc_get_mem_handle),
    FAKE_SYMBOL("cuIpcOpenMemHandle", 11000, false, fake_ipc_open_mem_handle),
    FAKE_SYMBOL("cuIpcCloseMemHandle", 4010, false, fake_ipc_close_mem_handle),
    FAKE_SYMBOL("cuMemExportToShareableHandle", 10020, false, fake_mem_export_to_shareable_handle),
    FAKE_SYMBOL("cuMemImportFromShareableHandle", 10020, false, fake_mem_import_from_shareable_handle),
    FAKE_SYMBOL("cuMemRetainAllocationHandle", 11000, false, fake_mem_retain_allocation_handle),
    FAKE_SYMBOL("cuMemGetAddressRange", 3020, false, fake_mem_get_address_range),
    FAKE_SYMBOL("cuModuleLoadData", 2000, false, fake_module_load_data),
    FAKE_SYMBOL("cuModuleGetFunction", 2000, false, fake_module_get_function),
    FAKE_SYMBOL("cuFuncGetName", 12030, false, fake_func_get_name),
    FAKE_SYMBOL("cuFuncGetParamInfo", 12040, false, fake_func_get_param_info),
    FAKE_SYMBOL("cuLaunchKernel", 4000, false, fake_launch_kernel),
    FAKE_SYMBOL("cuLaunchKernel", 7000, true, fake_launch_kernel_ptsz),
    FAKE_SYMBOL("cuLaunchKernelEx", 11060, false, fake_launch_kernel_ex),
    FAKE_SYMBOL("cuTensorMapEncodeTiled", 12000, false, fake_tensor_map_encode_tiled),
};

CUresult look_up(const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const Symbol* best = nullptr;
  bool named = false;
  for (const Symbol& s : kSymbols) {
    if (std::strcmp(s.base, symbol) != 0) continue;
    named = true;
    if (s.version > version) continue;
    // A per-thread request takes the per-thread variant where there is one.
    if (s.per_thread && !per_thread) continue;
    if (!best || s.per_thread > best->per_thread || (s.per_thread == best->per_thread && s.version > best->version))
      best = &s;
  }
  *pfn = best ? (env_on("FAKE_CUDA_INTERNAL_POINTERS") ? best->internal : best->exported) : nullptr;
  if (status)
    *status = best ? CU_GET_PROC_ADDRESS_SUCCESS
                   : (named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // namespace

CUresult fake_exported_get_proc_address_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                           CUdriverProcAddressQueryResult* status) {
  return look_up(symbol, pfn, version, flags, status);
}
CUresult fake_exported_get_proc_address(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return look_up(symbol, pfn, version, flags, nullptr);
}

// __wrap_NAME for every OWN(NAME) of glibc_symbols.def: what glibc added after 2.28,
// defined here with what 2.28 has (system calls, dl_iterate_phdr, the CLOCK_REALTIME
// wait), so that neither this code nor the static C++ runtime and CUDA runtime linked
// with it needs a newer glibc. Everything here is hidden and async-signal-safe where
// glibc's own is, except _dl_find_object (it takes the loader's lock, as the unwinder
// did before glibc 2.35).
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#define CUDADIAG_COMPAT extern "C" __attribute__((visibility("hidden")))

// 0: "the process may have more than one thread", so the C++ runtime always uses atomic
// reference counts (glibc sets it to 1 until the first thread; 0 is always correct).
extern "C" {
__attribute__((visibility("hidden"))) char __wrap___libc_single_threaded = 0;
}

// arc4random (2.36): 32 bits from getrandom(2), /dev/urandom where the kernel has no
// getrandom (before 3.17); arc4random cannot fail, so neither working is fatal.
CUDADIAG_COMPAT uint32_t __wrap_arc4random(void) {
  uint32_t v = 0;
  for (;;) {
    long n = syscall(SYS_getrandom, &v, sizeof v, 0);
    if (n == static_cast<long>(sizeof v)) return v;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != ENOSYS) break;
    int fd = static_cast<int>(syscall(SYS_open, "/dev/urandom", O_RDONLY | O_CLOEXEC));
    if (fd < 0) break;
    long r = syscall(SYS_read, fd, &v, sizeof v);
    syscall(SYS_close, fd);
    if (r == static_cast<long>(sizeof v)) return v;
    break;
  }
  __builtin_trap();
}

// The stat family (2.33 made them functions; before, headers inlined __xstat calls).
// struct stat and struct stat64 are the kernel's struct stat on x86_64.
static int stat_at(int dirfd, const char* path, void* buf, int flags) {
  return static_cast<int>(syscall(SYS_newfstatat, dirfd, path, buf, flags));
}
CUDADIAG_COMPAT int __wrap_stat(const char* path, struct stat* buf) { return stat_at(AT_FDCWD, path, buf, 0); }
CUDADIAG_COMPAT int __wrap_stat64(const char* path, struct stat64* buf) { return stat_at(AT_FDCWD, path, buf, 0); }
CUDADIAG_COMPAT int __wrap_lstat(const char* path, struct stat* buf) {
  return stat_at(AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}
CUDADIAG_COMPAT int __wrap_lstat64(const char* path, struct stat64* buf) {
  return stat_at(AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}
CUDADIAG_COMPAT int __wrap_fstatat(int dirfd, const char* path, struct stat* buf, int flags) {
  return stat_at(dirfd, path, buf, flags);
}
CUDADIAG_COMPAT int __wrap_fstatat64(int dirfd, const char* path, struct stat64* buf, int flags) {
  return stat_at(dirfd, path, buf, flags);
}
CUDADIAG_COMPAT int __wrap_fstat(int fd, struct stat* buf) { return static_cast<int>(syscall(SYS_fstat, fd, buf)); }
CUDADIAG_COMPAT int __wrap_fstat64(int fd, struct stat64* buf) { return static_cast<int>(syscall(SYS_fstat, fd, buf)); }

// pthread_cond_clockwait (2.30): the C++ runtime waits on the steady clock with it. The
// monotonic deadline becomes a CLOCK_REALTIME one for pthread_cond_timedwait; a wake-up
// early or late by a jump of the wall clock is a spurious wake-up or a late timeout,
// which every caller already handles (the C++ runtime compares the steady clock again).
CUDADIAG_COMPAT int __wrap_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                                  const struct timespec* abstime) {
  if (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L) return EINVAL;
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, abstime);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  struct timespec mono {};
  struct timespec real {};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  long long left_ns = (static_cast<long long>(abstime->tv_sec) - mono.tv_sec) * 1000000000LL +
                      (abstime->tv_nsec - mono.tv_nsec);
  if (left_ns < 0) left_ns = 0;
  long long deadline_ns = static_cast<long long>(real.tv_nsec) + left_ns % 1000000000LL;
  struct timespec deadline {};
  deadline.tv_sec = real.tv_sec + static_cast<time_t>(left_ns / 1000000000LL + deadline_ns / 1000000000LL);
  deadline.tv_nsec = static_cast<long>(deadline_ns % 1000000000LL);
  return pthread_cond_timedwait(cond, mutex, &deadline);
}

// _dl_find_object (2.35): the static unwinder of GCC 12+ asks only this for the unwind
// table of a frame's code (it no longer falls back itself), so it is answered from
// dl_iterate_phdr, as the unwinder found it before: the loaded object whose PT_LOAD
// segment holds the address, its PT_GNU_EH_FRAME segment and its link map.
namespace {
struct FindObject {
  uintptr_t pc;
  bool found;
  uintptr_t start;
  uintptr_t end;
  const void* eh_frame;
};

int find_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<FindObject*>(data);
  uintptr_t lo = UINTPTR_MAX;
  uintptr_t hi = 0;
  bool holds = false;
  const void* eh = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t at = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      if (at < lo) lo = at;
      if (at + ph.p_memsz > hi) hi = at + ph.p_memsz;
      if (f->pc >= at && f->pc < at + ph.p_memsz) holds = true;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh = reinterpret_cast<const void*>(at);
    }
  }
  if (!holds) return 0;
  f->found = true;
  f->start = lo;
  f->end = hi;
  f->eh_frame = eh;
  return 1;
}
}  // namespace

CUDADIAG_COMPAT int __wrap__dl_find_object(void* pc, struct dl_find_object* result) {
  FindObject f{reinterpret_cast<uintptr_t>(pc), false, 0, 0, nullptr};
  dl_iterate_phdr(find_object, &f);
  if (!f.found) return -1;
  Dl_info info;
  struct link_map* map = nullptr;
  if (!dladdr1(pc, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP)) map = nullptr;
  std::memset(result, 0, sizeof *result);
  result->dlfo_map_start = reinterpret_cast<void*>(f.start);
  result->dlfo_map_end = reinterpret_cast<void*>(f.end);
  result->dlfo_link_map = map;
  result->dlfo_eh_frame = const_cast<void*>(f.eh_frame);
  return 0;
}

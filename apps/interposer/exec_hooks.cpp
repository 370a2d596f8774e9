// The exec and posix_spawn family, exported under glibc's names: a program a process of
// the run starts keeps the interposer. When the new environment lacks it in LD_PRELOAD
// (or lacks the CUDADIAG_* settings), it is put back (exec_env.h) and the restoration
// is recorded; a program the loader will not preload into (set-user-ID, 32-bit) is
// recorded as escaped (a static one cannot load libcuda: no escape). Before an exec replaces this image, CUDA it used without the
// interposer is recorded (process.h, check_image_end). glibc's own functions do the rest.
// Everything here is async-signal-safe once the library's constructors ran: a program
// calls exec between fork (or vfork, whose child shares this memory) and the new image,
// while another thread of the parent may have held the loader's lock or the heap's.
// Nothing takes a lock, allocates (stack, or an anonymous mapping), looks a symbol up or
// writes memory the parent still uses, but the ring file (atomic stores).
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>

#include "apps/interposer/exec_env.h"
#include "apps/interposer/process.h"
#include "apps/interposer/program_check.h"
#include "apps/interposer/real_dlsym.h"

using namespace cudadiag::interposer;
namespace ring = cudadiag::ring;

#define CUDADIAG_EXEC_EXPORT extern "C" __attribute__((visibility("default")))

CUDADIAG_EXEC_EXPORT int hook_execve(const char* path, char* const argv[], char* const envp[]) __asm__("execve");
CUDADIAG_EXEC_EXPORT int hook_execv(const char* path, char* const argv[]) __asm__("execv");
CUDADIAG_EXEC_EXPORT int hook_execvp(const char* file, char* const argv[]) __asm__("execvp");
CUDADIAG_EXEC_EXPORT int hook_execvpe(const char* file, char* const argv[], char* const envp[]) __asm__("execvpe");
CUDADIAG_EXEC_EXPORT int hook_execl(const char* path, const char* arg, ...) __asm__("execl");
CUDADIAG_EXEC_EXPORT int hook_execlp(const char* file, const char* arg, ...) __asm__("execlp");
CUDADIAG_EXEC_EXPORT int hook_execle(const char* path, const char* arg, ...) __asm__("execle");
CUDADIAG_EXEC_EXPORT int hook_fexecve(int fd, char* const argv[], char* const envp[]) __asm__("fexecve");
CUDADIAG_EXEC_EXPORT int hook_execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags)
    __asm__("execveat");
CUDADIAG_EXEC_EXPORT int hook_posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                                          const posix_spawnattr_t* attr, char* const argv[], char* const envp[])
    __asm__("posix_spawn");
CUDADIAG_EXEC_EXPORT int hook_posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                                           const posix_spawnattr_t* attr, char* const argv[], char* const envp[])
    __asm__("posix_spawnp");

namespace {

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvpeFn = int (*)(const char*, char* const[], char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExecveatFn = int (*)(int, const char*, char* const[], char* const[], int);
using SpawnFn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                        char* const[], char* const[]);

// glibc's functions of these names (the next definitions after this library), resolved
// once when the library loads: a hook may run between fork or vfork and exec, where only
// async-signal-safe calls are allowed (no dlsym, no lock, no allocation), and from several
// threads at once (the library is built without thread-safe statics).
struct RealFunctions {
  ExecveFn execve = nullptr;
  ExecvpeFn execvpe = nullptr;
  FexecveFn fexecve = nullptr;
  ExecveatFn execveat = nullptr;
  SpawnFn posix_spawn = nullptr;
  SpawnFn posix_spawnp = nullptr;
};
constinit RealFunctions g_real;

template <class Fn>
Fn next(const char* name) {
  DlsymFn real = real_dlsym();
  return real ? reinterpret_cast<Fn>(real(RTLD_NEXT, name)) : nullptr;
}

__attribute__((constructor)) void resolve_real_functions() {
  g_real.execve = next<ExecveFn>("execve");
  g_real.execvpe = next<ExecvpeFn>("execvpe");
  g_real.fexecve = next<FexecveFn>("fexecve");
  g_real.execveat = next<ExecveatFn>("execveat");
  g_real.posix_spawn = next<SpawnFn>("posix_spawn");
  g_real.posix_spawnp = next<SpawnFn>("posix_spawnp");
}

// "fd N" for the records, without snprintf.
void describe_fd(int fd, char* out, std::size_t size) {
  char digits[16];
  std::size_t n = 0;
  unsigned v = fd < 0 ? 0u : static_cast<unsigned>(fd);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v && n < sizeof digits);
  std::size_t i = 0;
  for (const char* p = "fd "; *p && i + 1 < size; ++p) out[i++] = *p;
  while (n > 0 && i + 1 < size) out[i++] = digits[--n];
  out[i] = '\0';
}

constexpr std::size_t kPathBytes = 4096;
// Larger restored environments go to an anonymous mapping instead of the stack.
constexpr std::size_t kStackLimit = 64 << 10;

enum class Kind { exec, spawn };

// The program's path for the checks: `file` itself, or found along PATH (getenv reads
// environ without a lock).
const char* locate(const char* file, bool search, char* buffer) {
  if (!search) return file;
  return find_on_path(file, std::getenv("PATH"), buffer, kPathBytes) ? buffer : file;
}

void record_start(pid_t pid, const char* program, bool restored, ring::EventKind escape) {
  if (restored) record_event(ring::EventKind::preload_restored, static_cast<std::int32_t>(pid), program);
  if (escape != ring::EventKind::none) record_event(escape, static_cast<std::int32_t>(pid), program);
}

// Runs `start` with `envp`, or with the restored environment when it lacks the
// interposer. An exec records before it starts (a successful one never returns); a
// spawn records the child's pid after.
template <class Start>
int with_fence(Kind kind, const char* program, ring::EventKind escape, char* const envp[], pid_t* child,
               Start&& start) {
  ensure_initialized();
  if (kind == Kind::exec) check_image_end();
  const SavedEnv& saved = saved_env();
  const Restoration r = missing_from(envp, saved);
  char* const* env = envp;
  void* mapped = nullptr;
  if (r.bytes > 0) {
    void* buffer = nullptr;
    if (r.bytes <= kStackLimit) {
      buffer = alloca(r.bytes);
    } else {
      mapped = mmap(nullptr, r.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mapped != MAP_FAILED) buffer = mapped;
      else mapped = nullptr;
    }
    if (buffer) env = restore_environment(envp, saved, r, buffer);
  }
  const bool restored = env != envp;
  if (kind == Kind::exec) record_start(getpid(), program, restored, escape);
  const int rc = start(env);
  const int error = errno;
  if (kind == Kind::spawn && rc == 0) record_start(child ? *child : 0, program, restored, escape);
  if (mapped) munmap(mapped, r.bytes);
  errno = error;
  return rc;
}

int exec_path(const char* path, char* const argv[], char* const envp[]) {
  const ExecveFn real = g_real.execve;
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  return with_fence(Kind::exec, path, escape_of(path), envp, nullptr,
                    [&](char* const* env) { return real(path, argv, env); });
}

int exec_search(const char* file, char* const argv[], char* const envp[]) {
  const ExecvpeFn real = g_real.execvpe;
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  char found[kPathBytes];
  const char* program = locate(file, true, found);
  return with_fence(Kind::exec, program, escape_of(program), envp, nullptr,
                    [&](char* const* env) { return real(file, argv, env); });
}

// The arguments of execl/execlp/execle (up to the null one) as an array on the stack;
// execle's environment follows the null one (read only when `with_env`).
#define CUDADIAG_COLLECT_ARGS(first, args_out, with_env, envp_out)              \
  do {                                                                          \
    va_list ap;                                                                 \
    va_start(ap, first);                                                        \
    std::size_t n = 1;                                                          \
    while (va_arg(ap, const char*)) ++n;                                        \
    va_end(ap);                                                                 \
    args_out = static_cast<char**>(alloca((n + 1) * sizeof(char*)));            \
    va_start(ap, first);                                                        \
    args_out[0] = const_cast<char*>(first);                                     \
    for (std::size_t i = 1; i <= n; ++i) args_out[i] = va_arg(ap, char*);       \
    if (with_env) envp_out = va_arg(ap, char* const*);                          \
    va_end(ap);                                                                 \
  } while (0)

}  // namespace

int hook_execve(const char* path, char* const argv[], char* const envp[]) { return exec_path(path, argv, envp); }

int hook_execv(const char* path, char* const argv[]) { return exec_path(path, argv, environ); }

int hook_execvp(const char* file, char* const argv[]) { return exec_search(file, argv, environ); }

int hook_execvpe(const char* file, char* const argv[], char* const envp[]) { return exec_search(file, argv, envp); }

int hook_execl(const char* path, const char* arg, ...) {
  char** argv = nullptr;
  [[maybe_unused]] char* const* unused = nullptr;
  CUDADIAG_COLLECT_ARGS(arg, argv, false, unused);
  return exec_path(path, argv, environ);
}

int hook_execlp(const char* file, const char* arg, ...) {
  char** argv = nullptr;
  [[maybe_unused]] char* const* unused = nullptr;
  CUDADIAG_COLLECT_ARGS(arg, argv, false, unused);
  return exec_search(file, argv, environ);
}

int hook_execle(const char* path, const char* arg, ...) {
  char** argv = nullptr;
  char* const* envp = nullptr;
  CUDADIAG_COLLECT_ARGS(arg, argv, true, envp);
  return exec_path(path, argv, envp);
}

int hook_fexecve(int fd, char* const argv[], char* const envp[]) {
  const FexecveFn real = g_real.fexecve;
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  char program[32];
  describe_fd(fd, program, sizeof program);
  return with_fence(Kind::exec, program, escape_of_fd(fd), envp, nullptr,
                    [&](char* const* env) { return real(fd, argv, env); });
}

int hook_execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
  const ExecveatFn real = g_real.execveat;
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  ring::EventKind escape = ring::EventKind::none;
  if ((flags & AT_EMPTY_PATH) && path && *path == '\0') {
    escape = escape_of_fd(dirfd);
  } else if (path) {
    const int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
    if (fd >= 0) {
      escape = escape_of_fd(fd);
      close(fd);
    }
  }
  return with_fence(Kind::exec, path, escape, envp, nullptr,
                    [&](char* const* env) { return real(dirfd, path, argv, env, flags); });
}

int hook_posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                     const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  const SpawnFn real = g_real.posix_spawn;
  if (!real) return ENOSYS;
  pid_t child = 0;
  const int rc = with_fence(Kind::spawn, path, escape_of(path), envp, &child,
                            [&](char* const* env) { return real(&child, path, actions, attr, argv, env); });
  if (rc == 0 && pid) *pid = child;
  return rc;
}

int hook_posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                      const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  const SpawnFn real = g_real.posix_spawnp;
  if (!real) return ENOSYS;
  char found[kPathBytes];
  const char* program = locate(file, true, found);
  pid_t child = 0;
  const int rc = with_fence(Kind::spawn, program, escape_of(program), envp, &child,
                            [&](char* const* env) { return real(&child, file, actions, attr, argv, env); });
  if (rc == 0 && pid) *pid = child;
  return rc;
}

// The program's end: the wait for its GPU work that a fenced run records (end_wait.h),
// then the hold while the driver writes its GPU core dump (lib/fence/dump_linger.h says
// why: a store's fault is dumped only after the program's synchronize returned, and only
// while the process lives). The wait runs only in a process that records into a ring
// (CUDADIAG_RING); the hold only in a run the parent armed for a dump and asked to linger
// (CUDADIAG_DUMP_LINGER_MS); both only in a process that called the CUDA driver through
// this library: a shell or a worker of the run that never used CUDA ends at once.
// Anywhere else both hooks pass straight on.
//
// The wait runs before anything tears CUDA down: after main returns (through the
// program's own __libc_start_main, which this library answers) and on a call of exit(),
// both before the atexit handlers and library destructors that may release the context.
// A return from main reaches glibc's exit() from inside libc, which no preload sees:
// hence both. _exit and a fatal signal end the process without a wait.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>

#include "apps/interposer/end_wait.h"
#include "apps/interposer/process.h"
#include "apps/interposer/real_dlsym.h"
#include "apps/interposer/settings.h"
#include "fence/dump_linger.h"

namespace {

using MainFn = int (*)(int, char**, char**);
using StartMainFn = int (*)(MainFn, int, char**, void (*)(), void (*)(), void (*)(), void*);
using ExitFn = void (*)(int);

MainFn g_program_main = nullptr;
std::atomic<bool> g_lingered{false};

template <class Fn>
Fn next_definition(const char* name) {
  const cudadiag::interposer::DlsymFn real = cudadiag::interposer::real_dlsym();
  return real ? reinterpret_cast<Fn>(real(RTLD_NEXT, name)) : nullptr;
}

bool linger_asked() {
  return cudadiag::fence::parse_linger_ms(std::getenv(cudadiag::fence::kDumpLingerVar)) != 0;
}

bool end_wanted() { return linger_asked() || cudadiag::interposer::settings().ring_path != nullptr; }

// Once per process, whichever end comes first.
void linger_once() {
  if (!cudadiag::interposer::cuda_seen_here() || g_lingered.exchange(true)) return;
  cudadiag::fence::linger_if_armed(static_cast<long>(::getpid()));
}

void at_program_end() {
  cudadiag::interposer::wait_at_program_end();
  if (linger_asked()) linger_once();
}

int main_then_end(int argc, char** argv, char** envp) {
  const int status = g_program_main(argc, argv, envp);
  at_program_end();
  return status;
}

}  // namespace

// Exported under glibc's names (exports.map); the C++ names keep <stdlib.h>'s declaration
// of exit apart.
extern "C" __attribute__((visibility("default"))) int hook_libc_start_main(
    MainFn main, int argc, char** argv, void (*init)(), void (*fini)(), void (*rtld_fini)(),
    void* stack_end) __asm__("__libc_start_main");
extern "C" __attribute__((visibility("default"), noreturn)) void hook_exit(int status) __asm__("exit");

int hook_libc_start_main(MainFn main, int argc, char** argv, void (*init)(), void (*fini)(), void (*rtld_fini)(),
                         void* stack_end) {
  const auto real = next_definition<StartMainFn>("__libc_start_main");
  // Every dynamically linked program gets here from its _start with glibc loaded: a
  // lookup that fails leaves no way to start the program, and says so by its exit code.
  if (real == nullptr) ::_exit(127);
  MainFn run = main;
  if (end_wanted()) {
    g_program_main = main;
    run = main_then_end;
  }
  return real(run, argc, argv, init, fini, rtld_fini, stack_end);
}

void hook_exit(int status) {
  at_program_end();
  const auto real = next_definition<ExitFn>("exit");
  if (real != nullptr) real(status);
  ::_exit(status);
}

// What a multi-GPU job does to the fence, against the fake driver with FAKE_CUDA_DEVICES=2
// (tests/interposer/fake_driver): contexts of two devices, peer access, launches from many
// threads, and fork / vfork + exec while threads launch. Takes the driver as CUDA 12+
// runtimes do (dlopen libcuda.so.1, cuGetProcAddress_v2); prints what it saw.
//
//   multi_gpu cross-free          allocates 4,000 bytes on device 0, launches on it, makes
//                                 device 1 current and frees the buffer ("buffer=0x...")
//   multi_gpu peer                a kernel on device 0 writes a buffer of device 1: without
//                                 peer access, with it (a buffer made before and one after),
//                                 and after it was disabled; each launch's result
//   multi_gpu threads N M         N threads, each on device i % 2 with a buffer of its own,
//                                 launch M kernels each; "launches=N*M" when all returned 0
//   multi_gpu fork-exec N         4 threads launch (and load and unload libm) while the main
//                                 thread runs N children by fork + execv and N by vfork +
//                                 execv; each child must exit 0
//   multi_gpu noop                exits 0 (the children of fork-exec)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe_driver.h"

namespace {

using probe::fill;
using probe::fill_bytes;
using probe::g_gpa;
using probe::get;


struct Api {
  PFN_cuInit_v2000 init = get<PFN_cuInit_v2000>("cuInit");
  PFN_cuDevicePrimaryCtxRetain_v7000 retain = get<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain");
  PFN_cuCtxSetCurrent_v4000 set_current = get<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent");
  PFN_cuCtxEnablePeerAccess_v4000 enable_peer = get<PFN_cuCtxEnablePeerAccess_v4000>("cuCtxEnablePeerAccess");
  PFN_cuCtxDisablePeerAccess_v4000 disable_peer = get<PFN_cuCtxDisablePeerAccess_v4000>("cuCtxDisablePeerAccess");
  PFN_cuMemAlloc_v3020 alloc = get<PFN_cuMemAlloc_v3020>("cuMemAlloc");
  PFN_cuMemFree_v3020 free = get<PFN_cuMemFree_v3020>("cuMemFree");
  PFN_cuModuleLoadData_v2000 load = get<PFN_cuModuleLoadData_v2000>("cuModuleLoadData");
  PFN_cuModuleGetFunction_v2000 function = get<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction");
  PFN_cuLaunchKernel_v4000 launch = get<PFN_cuLaunchKernel_v4000>("cuLaunchKernel");

  bool complete() const {
    return init && retain && set_current && enable_peer && disable_peer && alloc && free && load && function && launch;
  }
};

int fail(const char* what, int rc) {
  std::printf("FAILED: %s returned %d\n", what, rc);
  return 1;
}


CUcontext context(const Api& api, int device) {
  CUcontext c = nullptr;
  return api.retain(&c, device) == CUDA_SUCCESS ? c : nullptr;
}

int cross_free(const Api& api, CUfunction f) {
  CUcontext c0 = context(api, 0), c1 = context(api, 1);
  if (!c0 || !c1) return fail("cuDevicePrimaryCtxRetain", 0);
  if (int rc = api.set_current(c0)) return fail("cuCtxSetCurrent(0)", rc);
  CUdeviceptr p = 0;
  if (int rc = api.alloc(&p, 4000)) return fail("cuMemAlloc", rc);
  if (int rc = fill(api, f, p, 4000, 3)) return fail("cuLaunchKernel", rc);
  std::printf("buffer=%#llx\n", static_cast<unsigned long long>(p));
  if (int rc = api.set_current(c1)) return fail("cuCtxSetCurrent(1)", rc);
  if (int rc = api.free(p)) return fail("cuMemFree", rc);
  std::printf("freed with device 1 current\n");
  return 0;
}

int peer(const Api& api, CUfunction f) {
  CUcontext c0 = context(api, 0), c1 = context(api, 1);
  if (!c0 || !c1) return fail("cuDevicePrimaryCtxRetain", 0);
  CUdeviceptr before = 0, after = 0;
  if (int rc = api.set_current(c1)) return fail("cuCtxSetCurrent(1)", rc);
  if (int rc = api.alloc(&before, 4000)) return fail("cuMemAlloc", rc);
  if (int rc = api.set_current(c0)) return fail("cuCtxSetCurrent(0)", rc);
  std::printf("device 0 writes device 1's buffer without peer access: %d\n", fill(api, f, before, 4000, 1));
  if (int rc = api.enable_peer(c1, 0)) return fail("cuCtxEnablePeerAccess", rc);
  std::printf("enabled again: %d\n", static_cast<int>(api.enable_peer(c1, 0)));
  std::printf("with peer access, a buffer made before: %d\n", fill(api, f, before, 4000, 2));
  if (int rc = api.set_current(c1)) return fail("cuCtxSetCurrent(1)", rc);
  if (int rc = api.alloc(&after, 4000)) return fail("cuMemAlloc", rc);
  std::printf("device 1 writes its own buffer: %d\n", fill(api, f, after, 4000, 3));
  if (int rc = api.set_current(c0)) return fail("cuCtxSetCurrent(0)", rc);
  std::printf("with peer access, a buffer made after: %d\n", fill(api, f, after, 4000, 4));
  if (int rc = api.disable_peer(c1)) return fail("cuCtxDisablePeerAccess", rc);
  std::printf("after disabling peer access: %d %d\n", fill(api, f, before, 4000, 5), fill(api, f, after, 4000, 6));
  // Device 1's buffers are its own: the peer access of device 0 never took its access away.
  if (int rc = api.set_current(c1)) return fail("cuCtxSetCurrent(1)", rc);
  std::printf("device 1 writes its own buffers: %d %d\n", fill(api, f, before, 4000, 7), fill(api, f, after, 4000, 8));
  if (int rc = api.free(before)) return fail("cuMemFree", rc);
  if (int rc = api.free(after)) return fail("cuMemFree", rc);
  return 0;
}

struct Launcher {
  const Api* api = nullptr;
  CUfunction f = nullptr;
  int device = 0;
  int launches = 0;
  int failures = 0;
  const std::atomic<bool>* stop = nullptr;  // fork-exec: launch until told to stop
  bool churn_loader = false;                // and load and unload a library between launches
};

void* launch_loop(void* arg) {
  auto* l = static_cast<Launcher*>(arg);
  const Api& api = *l->api;
  if (api.set_current(context(api, l->device)) != CUDA_SUCCESS) {
    ++l->failures;
    return nullptr;
  }
  CUdeviceptr p = 0;
  if (api.alloc(&p, 256) != CUDA_SUCCESS) {
    ++l->failures;
    return nullptr;
  }
  for (int i = 0; l->stop ? !l->stop->load() : i < l->launches; ++i) {
    if (fill(api, l->f, p, 256, i & 0xff) != CUDA_SUCCESS) ++l->failures;
    if (l->churn_loader && i % 16 == 0)
      if (void* m = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL)) dlclose(m);
  }
  if (api.free(p) != CUDA_SUCCESS) ++l->failures;
  return nullptr;
}

int threads(const Api& api, CUfunction f, int n, int m) {
  std::vector<Launcher> launchers(static_cast<std::size_t>(n));
  std::vector<pthread_t> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    launchers[i] = Launcher{&api, f, i % 2, m, 0, nullptr, false};
    if (pthread_create(&ids[i], nullptr, launch_loop, &launchers[i]) != 0) return fail("pthread_create", 0);
  }
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    pthread_join(ids[i], nullptr);
    failures += launchers[i].failures;
  }
  if (failures) return fail("a launch", failures);
  std::printf("launches=%d\n", n * m);
  return 0;
}

int wait_ok(pid_t pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int fork_exec(const Api& api, CUfunction f, const char* self, int n) {
  std::atomic<bool> stop{false};
  constexpr int kThreads = 4;
  Launcher launchers[kThreads];
  pthread_t ids[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    launchers[i] = Launcher{&api, f, i % 2, 0, 0, &stop, true};
    if (pthread_create(&ids[i], nullptr, launch_loop, &launchers[i]) != 0) return fail("pthread_create", 0);
  }
  char* argv[] = {const_cast<char*>(self), const_cast<char*>("noop"), nullptr};
  int forked = 0, vforked = 0;
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      execv(self, argv);
      _exit(127);
    }
    forked += wait_ok(pid);
    pid = vfork();
    if (pid == 0) {
      execv(self, argv);
      _exit(127);
    }
    vforked += wait_ok(pid);
  }
  stop.store(true);
  int failures = 0;
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(ids[i], nullptr);
    failures += launchers[i].failures;
  }
  std::printf("fork+exec children ok: %d of %d\nvfork+exec children ok: %d of %d\nlaunch failures: %d\n", forked, n,
              vforked, n, failures);
  return forked == n && vforked == n && failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "noop") return 0;
  const char* what = nullptr;
  int rc = 0;
  if (!probe::open_driver(what, rc)) return fail(what, rc);
  const Api api;
  if (!api.complete()) return fail("cuGetProcAddress of an entry point", 0);
  if (int rc = api.init(0)) return fail("cuInit", rc);
  CUfunction f = fill_bytes(api);
  if (!f) return fail("cuModuleGetFunction", 0);
  if (mode == "cross-free") return cross_free(api, f);
  if (mode == "peer") return peer(api, f);
  if (mode == "threads" && argc > 3) return threads(api, f, std::atoi(argv[2]), std::atoi(argv[3]));
  if (mode == "fork-exec" && argc > 2) return fork_exec(api, f, argv[0], std::atoi(argv[2]));
  std::printf("usage: multi_gpu cross-free|peer|threads N M|fork-exec N|noop\n");
  return 2;
}

// The C side of the interposer's dlopen (dlopen_entry.S keeps the caller's return
// address): every load goes to glibc's dlopen as the program made it; a load with
// RTLD_DEEPBIND is noted first. Such a library binds dlsym and the driver's functions
// inside its own dependencies, past the interposer: CUDA it uses is not fenced, and the
// process says so when its image ends (process.h, check_image_end).
#include <dlfcn.h>

#include <atomic>

#include "apps/interposer/alloc_site.h"
#include "apps/interposer/process.h"

namespace {

using DlopenFn = void* (*)(const char*, int);
std::atomic<DlopenFn> g_real_dlopen{nullptr};

DlopenFn real_dlopen() {
  DlopenFn f = g_real_dlopen.load(std::memory_order_acquire);
  if (f) return f;
  void* p = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
  if (!p) p = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
  f = reinterpret_cast<DlopenFn>(p);
  if (f) g_real_dlopen.store(f, std::memory_order_release);
  return f;
}

}  // namespace

// Returns the function that continues the call with the same arguments (null: the load
// returns null).
extern "C" __attribute__((visibility("hidden"))) void* cudadiag_dlopen_route(const char* file, int mode) {
  if (mode & RTLD_DEEPBIND) cudadiag::interposer::note_deepbind_load(file);
  cudadiag::interposer::note_library_load();
  return reinterpret_cast<void*>(real_dlopen());
}

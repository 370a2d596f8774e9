// The C side of the interposer's dlsym (dlsym_entry.S keeps the caller's return address
// intact and asks cudadiag_dlsym_route where to go): every lookup goes to glibc's dlsym
// as the program made it, except lookups of the driver entry points the interposer
// replaces, which are answered with its hooks when the driver really has the symbol.
#include <dlfcn.h>

#include "apps/interposer/entry_points.h"
#include "apps/interposer/libcuda.h"
#include "apps/interposer/process.h"
#include "apps/interposer/real_dlsym.h"

using namespace cudadiag::interposer;

extern "C" __attribute__((visibility("hidden"))) void* cudadiag_dlsym_hooked(void* handle, const char* name);

// Returns the function that continues the call with the same arguments (null: the
// lookup returns null). RTLD_NEXT always goes to glibc: it searches after the caller.
extern "C" __attribute__((visibility("hidden"))) void* cudadiag_dlsym_route(void* handle, const char* name) {
  DlsymFn real = real_dlsym();
  Entry e{};
  if (!real || handle == RTLD_NEXT || in_internal_scope() || !find_entry(name, e))
    return reinterpret_cast<void*>(real);
  return reinterpret_cast<void*>(&cudadiag_dlsym_hooked);
}

extern "C" void* cudadiag_dlsym_hooked(void* handle, const char* name) {
  Entry e{};
  if (!find_entry(name, e)) return nullptr;
  void* found = nullptr;
  {
    InternalScope internal;
    if (DlsymFn real = real_dlsym()) found = real(handle, name);
  }
  if (!found) return nullptr;
  if (is_hook(found)) {
    // RTLD_DEFAULT found the interposer's own export: answer with it only when the driver
    // really provides the function (a program probing for libcuda must not find it here).
    return real_entry(e) ? found : nullptr;
  }
  remember_real(e, found);
  if (handle != RTLD_DEFAULT) remember_libcuda_handle(handle);
  ensure_initialized();
  note_cuda_seen();
  return entry_info(e).hook;
}

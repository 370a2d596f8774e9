#pragma once
// Symbols of a library opened with dlopen, as typed function pointers: the driver's
// libraries (libcuda, libnvidia-ml) are loaded at run time, never linked.
#include <dlfcn.h>

#include <cstring>
#include <string>

namespace cudadiag::host {

// dlopen(library, RTLD_NOW | RTLD_LOCAL); null with `reason` set (dlerror's words) when
// it cannot be loaded.
inline void* open_library(const std::string& library, std::string& reason) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    reason = e ? e : (library + ": cannot be loaded");
  }
  return lib;
}

// Sets fn to the symbol `name` of lib; leaves it null when the library lacks it.
template <typename Fn>
void resolve_symbol(void* lib, const char* name, Fn& fn) {
  void* sym = ::dlsym(lib, name);
  static_assert(sizeof(fn) == sizeof(sym));
  if (sym) std::memcpy(&fn, &sym, sizeof fn);  // object -> function pointer without a cast warning
}

}  // namespace cudadiag::host

// Ordinary dynamic lookups, printed so that a run under the interposer can be compared
// with one without it: they must not differ.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

extern "C" int probe_value();  // libprobe_wrap.so, which reaches libprobe_base.so through RTLD_NEXT

int main() {
  void* libm = dlopen("libm.so.6", RTLD_NOW);
  auto cosine = libm ? reinterpret_cast<double (*)(double)>(dlsym(libm, "cos")) : nullptr;
  std::printf("cos(0)=%g\n", cosine ? cosine(0.0) : -1.0);
  std::printf("printf found=%d\n", dlsym(RTLD_DEFAULT, "printf") == reinterpret_cast<void*>(&std::printf));
  std::printf("RTLD_NEXT chain=%d\n", probe_value());

  // A library loaded with RTLD_LOCAL finds its own dependency's symbols through
  // RTLD_DEFAULT (glibc searches the caller's scope).
  void* local = dlopen("libprobe_local.so", RTLD_NOW | RTLD_LOCAL);
  auto lookup = local ? reinterpret_cast<int (*)()>(dlsym(local, "probe_local_lookup")) : nullptr;
  std::printf("RTLD_DEFAULT from a local library=%d\n", lookup ? lookup() : -1);

  // No driver in this process: its entry points are not there, whatever is preloaded.
  std::printf("cuGetProcAddress_v2=%p\n", dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"));
  std::printf("cuMemAlloc_v2=%p\n", dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
  std::printf("missing=%p\n", dlsym(RTLD_DEFAULT, "no_such_symbol_anywhere"));
  const char* error = dlerror();
  std::printf("dlerror names it=%d\n", error && std::strstr(error, "no_such_symbol_anywhere") != nullptr);
  return 0;
}

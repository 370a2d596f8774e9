// The shared libraries dlsym_probe loads, one per PROBE_LIBRARY value.
#include <dlfcn.h>

#if PROBE_LIBRARY == 1  // libprobe_base.so
extern "C" int probe_value() { return 1; }
#elif PROBE_LIBRARY == 2  // libprobe_wrap.so: wraps the next probe_value
extern "C" int probe_value() {
  auto next = reinterpret_cast<int (*)()>(dlsym(RTLD_NEXT, "probe_value"));
  return next ? 10 + next() : -1;
}
#elif PROBE_LIBRARY == 3  // libprobe_dep.so
extern "C" int probe_dep_value() { return 7; }
#elif PROBE_LIBRARY == 4  // libprobe_local.so, linked against libprobe_dep.so
extern "C" int probe_local_lookup() {
  auto dep = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "probe_dep_value"));
  return dep ? dep() : -1;
}
#endif

// __wrap___libc_start_main for executables (glibc_symbols.def, START): crt1.o of glibc
// 2.34+ calls __libc_start_main with no init function, for that version runs the
// program's constructors itself. The binary binds the 2.2.5 version instead, which on
// glibc 2.28 to 2.33 runs only the init function it is given (crt1.o's __libc_csu_init
// once did that): so it is given run_constructors, which does what __libc_csu_init did.
// glibc 2.34+ runs the given function instead of its own, so every glibc runs the
// same constructors once. DT_PREINIT_ARRAY is run by the loader on every version.
#include <cstddef>

namespace {
using InitFn = void (*)(int, char**, char**);
using MainFn = int (*)(int, char**, char**);
}  // namespace

extern "C" {
// Placed by the linker around .init_array; _init is crti.o's DT_INIT function.
extern InitFn __init_array_start[] __attribute__((visibility("hidden")));
extern InitFn __init_array_end[] __attribute__((visibility("hidden")));
void _init(void);

int cudadiag_glibc_old___libc_start_main(MainFn main, int argc, char** argv, InitFn init, void (*fini)(void),
                                         void (*rtld_fini)(void), void* stack_end);
}
// The version comes from the table's START row.
#define OLD(lib, name, version)
#define OWN(name)
#define START(name, version) __asm__(".symver cudadiag_glibc_old_" #name ", " #name "@" #version);
#include "apps/compat/glibc_symbols.def"
#undef OLD
#undef OWN
#undef START

namespace {
void run_constructors(int argc, char** argv, char** envp) {
  _init();
  const std::size_t n = static_cast<std::size_t>(__init_array_end - __init_array_start);
  for (std::size_t i = 0; i < n; ++i) __init_array_start[i](argc, argv, envp);
}
}  // namespace

extern "C" __attribute__((visibility("hidden"))) int __wrap___libc_start_main(MainFn main, int argc, char** argv,
                                                                              InitFn init, void (*fini)(void),
                                                                              void (*rtld_fini)(void),
                                                                              void* stack_end) {
  return cudadiag_glibc_old___libc_start_main(main, argc, argv, init ? init : run_constructors, fini, rtld_fini,
                                              stack_end);
}

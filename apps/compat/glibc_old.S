/* __wrap_NAME for every OLD(LIB, NAME, VERSION) of glibc_symbols.def whose LIB this
   object is built for (-DCUDADIAG_GLIBC_LIB_<lib>, one object per library): a jump to
   NAME@VERSION. The linker's --wrap=NAME sends every reference to NAME (ours,
   libstdc++.a's, libcudart_static.a's) here, so the binary needs the version glibc 2.28
   has, and the arguments and the return address pass through untouched. Each
   trampoline is hidden (never exported from the interposer or the binary). */
#define TRAMPOLINE(name, version)                            \
	.section .text.__wrap_##name,"ax",@progbits;          \
	.globl __wrap_##name;                                  \
	.hidden __wrap_##name;                                 \
	.type __wrap_##name, @function;                        \
	.p2align 4;                                            \
__wrap_##name:                                               \
	.cfi_startproc;                                        \
	jmp cudadiag_glibc_old_##name@PLT;                     \
	.cfi_endproc;                                          \
	.size __wrap_##name, .-__wrap_##name;                  \
	.symver cudadiag_glibc_old_##name, name@version;
#define SKIP(name, version)
#ifdef CUDADIAG_GLIBC_LIB_pthread
#define OLD_pthread TRAMPOLINE
#else
#define OLD_pthread SKIP
#endif
#ifdef CUDADIAG_GLIBC_LIB_dl
#define OLD_dl TRAMPOLINE
#else
#define OLD_dl SKIP
#endif
#ifdef CUDADIAG_GLIBC_LIB_rt
#define OLD_rt TRAMPOLINE
#else
#define OLD_rt SKIP
#endif
#ifdef CUDADIAG_GLIBC_LIB_m
#define OLD_m TRAMPOLINE
#else
#define OLD_m SKIP
#endif
#define OLD(lib, name, version) OLD_##lib(name, version)
#define OWN(name)
#define START(name, version)
#include "glibc_symbols.def"

	.section .note.GNU-stack,"",@progbits

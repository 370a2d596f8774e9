/* __wrap_NAME for every OLD(NAME, VERSION) of glibc_symbols.def: a jump to NAME@VERSION.
   The linker's --wrap=NAME sends every reference to NAME (ours, libstdc++.a's,
   libcudart_static.a's) here, so the binary needs the version glibc 2.28 has, and
   the arguments and the return address pass through untouched. Each trampoline has its
   own section and is hidden (never exported from the interposer or the binary). */
#define OLD(name, version)                                   \
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
#define OWN(name)
#define START(name, version)
#include "glibc_symbols.def"

	.section .note.GNU-stack,"",@progbits

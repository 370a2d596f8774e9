/* The interposer's dlopen. glibc's dlopen looks at its return address to know who asks
   (the caller's RPATH/RUNPATH, $ORIGIN, its namespace), so this entry does not call it:
   it asks cudadiag_dlopen_route (dlopen_hook.cpp) where to go, which notes a load with
   RTLD_DEEPBIND, and jumps there with the original arguments and return address. */
#if defined(__x86_64__)
	.text
	.p2align 4
	.globl	dlopen
	.type	dlopen, @function
dlopen:
	.cfi_startproc
	endbr64
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp                 /* 16-byte stack alignment at the call */
	.cfi_adjust_cfa_offset 8
	call	cudadiag_dlopen_route
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	jz	1f
	jmp	*%rax
1:
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	dlopen, .-dlopen
#else
#error "dlopen_entry.S is written for x86_64"
#endif
	.section .note.GNU-stack,"",@progbits

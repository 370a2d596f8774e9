/* The interposer's dlsym. glibc's dlsym looks at its return address to know who asks
   (RTLD_NEXT searches after the caller; RTLD_DEFAULT from a library loaded with
   RTLD_LOCAL also searches that library's own dependencies), so this entry does not call
   it: it asks cudadiag_dlsym_route (dlsym_hook.cpp) where to go and jumps there with the
   original arguments and return address. */
#if defined(__x86_64__)
	.text
	.p2align 4
	.globl	dlsym
	.type	dlsym, @function
dlsym:
	.cfi_startproc
	endbr64
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp                 /* 16-byte stack alignment at the call */
	.cfi_adjust_cfa_offset 8
	call	cudadiag_dlsym_route
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
	.size	dlsym, .-dlsym
#else
#error "dlsym_entry.S is written for x86_64"
#endif
	.section .note.GNU-stack,"",@progbits

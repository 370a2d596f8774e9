/* The interposer's dlsym. glibc's dlsym looks at its return address to know who asks
   (RTLD_NEXT searches after the caller; RTLD_DEFAULT from a library loaded with
   RTLD_LOCAL also searches that library's own dependencies), so this entry does not call
   it: it asks cudadiag_dlsym_route (dlsym_hook.cpp) where to go and jumps there with the
   original arguments and return address. */
#include "route_entry.inc"
	ROUTE_ENTRY dlsym, cudadiag_dlsym_route
	.section .note.GNU-stack,"",@progbits

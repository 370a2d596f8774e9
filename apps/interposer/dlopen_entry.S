/* The interposer's dlopen. glibc's dlopen looks at its return address to know who asks
   (the caller's RPATH/RUNPATH, $ORIGIN, its namespace), so this entry does not call it:
   it asks cudadiag_dlopen_route (dlopen_hook.cpp) where to go, which notes a load with
   RTLD_DEEPBIND, and jumps there with the original arguments and return address. */
#include "route_entry.inc"
	ROUTE_ENTRY dlopen, cudadiag_dlopen_route
	.section .note.GNU-stack,"",@progbits

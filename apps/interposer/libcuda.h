#pragma once
// The driver library as the program loaded it (possibly privately, with RTLD_LOCAL, as
// CUDA runtimes do) and its cuGetProcAddress, for the interposer's own lookups.
#include <cuda.h>

namespace cudadiag::interposer {

// Kept from a dlsym of a hooked entry point through a handle: the driver library.
void remember_libcuda_handle(void* handle) noexcept;
// That handle, else libcuda.so.1 when the process has it loaded already (never loads it).
void* libcuda_handle() noexcept;
// A symbol exported by the driver library itself; null when it is not loaded or lacks it.
void* libcuda_symbol(const char* name) noexcept;

// The driver's cuGetProcAddress (the _v2 one when the driver has it); CUDA_ERROR_NOT_FOUND
// when no driver is reachable.
CUresult real_get_proc_address(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) noexcept;

}  // namespace cudadiag::interposer

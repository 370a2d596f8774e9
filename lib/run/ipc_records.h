#pragma once
// What the parent says of device memory the fence did not place itself, and of CUDA IPC
// hand-overs of fenced memory that failed: a mapping the program made (cuMemMap: NCCL's
// buffers, PyTorch's expandable segments), a buffer imported over CUDA IPC (the
// exporter's allocation, from its process's ring: fence_records.h joins them). Pure.
#include <string>

#include "run/allocation.h"

namespace cudadiag::run {

// "memory the program mapped itself with cuMemMap, 4 MiB", "imported over CUDA IPC by
// process 12 from process 10's allocation #3 (16777216 bytes from cuMemAlloc_v2)";
// empty for memory the program allocated.
std::string mapping_origin_text(const AllocationRecord& a);

// "CUDA IPC: process 12 could not map process 10's allocation #3: cuMemImportFromShareableHandle
// failed (result 1); the program got an error"
std::string ipc_failure_text(const IpcFailureRecord& f);

// "4 MiB", "1.5 GiB", "4000 bytes".
std::string size_text(std::uint64_t bytes);

}  // namespace cudadiag::run

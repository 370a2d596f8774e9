#pragma once
// Child side of the process model: each kernel family runs one case in this process
// (which owns a CUDA context) and returns its result line. Never called in the parent.
//
// A result line (see cases/case_spec.h) is a JSON object with at least "outcome";
// "error" comes from failure_json(); "launch_log"/"buffers" from the session.
#include "cases/case_spec.h"
#include "kernels/runtime/gpu_runtime.h"
#include "report/report.h"

namespace cudadiag::app::child {

using json = report::json;

json run_fault_case(const cases::CaseSpec& spec);
json run_index_select_case(const cases::CaseSpec& spec);
json run_attention_case(const cases::CaseSpec& spec);
json run_tma_case(const cases::CaseSpec& spec);

// Shared helpers for building result lines.
json failure_json(const gpu::CudaFailure& f);           // {code,name,source,message,surfaced_at,api_call,location,last_kernel}
json launch_log_json(const gpu::Session& s, size_t tail = 16);
json buffers_json(const gpu::Session& s);
// {"outcome":"cuda_error","error":failure_json(f), launch_log, buffers}
json cuda_error_line(const gpu::CudaFailure& f, const gpu::Session* s);
// Allocator of a spec, with fence_buffers applied to the session (throws std::invalid_argument).
gpu::AllocatorMode allocator_of(const cases::CaseSpec& spec);
void apply_fence_buffers(const cases::CaseSpec& spec, gpu::Session& s);

}  // namespace cudadiag::app::child

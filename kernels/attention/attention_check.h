#pragma once
// The device-side verification of one attention run (internal to kernels/attention):
// an fp32 reference computed on the device, and a check kernel that reduces the run's
// comparison into its RunCounters. Plain C++ header.
#include "kernels/attention/attention.h"
#include "kernels/runtime/run_counters.h"

namespace cudadiag::attention {

// fp32 reference: softmax(Q K^T / sqrt(D)) V with expf, every key of every row (the
// causal mask and the tail mask always applied: it is the truth, whatever the knobs).
// Output contiguous [B, H, S, D] fp32. Checked launch, not synchronised, not recorded.
void launch_reference(gpu::Session& s, const Problem& p, const DeviceTensors& t, float* out);

// Compares o (with its strides) against ref into *c: diff2/ref2 over finite outputs,
// non-finite outputs (mismatches, first_bad), non-finite reference elements, and rows
// whose error exceeds 10x the tolerance (bad_rows, first_bad_row).
void launch_check(gpu::Session& s, const Problem& p, const DeviceTensors& t, const float* ref, double tolerance,
                  gpu::RunCounters* c);

}  // namespace cudadiag::attention

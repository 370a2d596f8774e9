#pragma once
// CUDA that could not start in a child (no driver, no device, a driver that does not
// match the runtime or the kernel module): the machine, not the case or the program.
// Every command decides it here: repro skips such results ("CUDA unusable"), fault and
// index-select report no_gpu, run's verdict is inconclusive with exit 3.
#include "report/report.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::evidence {

// The taxonomy classes that mean CUDA could not start: no_device, driver_mismatch.
bool cuda_could_not_start(taxonomy::ErrorClass error_class);

// A result that ended in such a CUDA error.
bool cuda_could_not_start(const report::Result& r);

}  // namespace cudadiag::evidence

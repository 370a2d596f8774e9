#pragma once
// The parent's side of the `__probe-driver` child: cuInit can hang or crash on a broken
// install, so the driver is asked in a child of our own binary, with a deadline, under
// the job's device binding. The child prints cuda_driver_snapshot() (host/cuda_driver.h).
#include <chrono>
#include <string>

#include "host/device_binding.h"
#include "report/report.h"

namespace cudadiag::host {

inline constexpr const char* kProbeDriverCommand = "__probe-driver";

// The child's snapshot, or one with available:false, status probe_failed and the reason
// when the child crashed, hung or wrote nothing usable. Never throws.
report::json run_driver_probe(const std::string& self_exe, const DeviceBinding& binding,
                              std::chrono::milliseconds deadline);

// What the child prints: one line of JSON on the result fd (stdout without one).
int write_driver_probe_answer();

}  // namespace cudadiag::host

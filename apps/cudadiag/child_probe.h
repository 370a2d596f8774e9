#pragma once
// `__probe-cuda`: the child that asks CUDA what it sees (driver and runtime versions,
// device count, properties of each device) for `env`; the parent side that spawns it is
// probe_cuda.h.
#include <CLI/CLI.hpp>

namespace cudadiag::app {

// Registers the hidden child subcommands: probe_cuda.h's kProbeCudaCommand, and
// host::kProbeDriverCommand (the driver's device list, host/driver_probe.h).
void set_probe_command(CLI::App& app);

}  // namespace cudadiag::app

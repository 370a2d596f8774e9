#pragma once
// The interposer's state in this process: its settings, the ring file it attached to at
// load, and the ring it records into. The first process that records claims the file
// named by CUDADIAG_RING; any later one (a child that also uses CUDA) records into
// "<file>.<pid>" and is counted in the file's header.
#include "kernels/interposer/ring_writer.h"
#include "kernels/interposer/settings.h"

namespace cudadiag::interposer {

// Reads the settings and attaches to the ring file, once per process (the library's
// constructor calls it; hooks call it too, in case they run first).
void ensure_initialized() noexcept;
const Settings& settings() noexcept;

// The ring this process records into, claimed on first use; null without CUDADIAG_RING
// or when the file cannot be used.
RingWriter* recorder() noexcept;

// Every hook starts here: settings read and ring attached (once), and "the program
// resolved a driver entry point" said in the file's header (once per process).
void note_cuda_seen() noexcept;

}  // namespace cudadiag::interposer

#pragma once
// The interposer's state in this process: its settings, the ring file it attached to at
// load, and the ring it records into. The first process that records claims the file
// named by CUDADIAG_RING; any later one (a child that also uses CUDA) records into
// "<file>.<pid>" and is counted in the file's header.
#include <cstdint>

#include "apps/interposer/exec_env.h"
#include "apps/interposer/ring_writer.h"
#include "apps/interposer/settings.h"

namespace cudadiag::interposer {

// Reads the settings and attaches to the ring file, once per process (the library's
// constructor calls it; hooks call it too, in case they run first).
void ensure_initialized() noexcept;
const Settings& settings() noexcept;

// The ring this process records into, claimed on first use; null without CUDADIAG_RING
// or when the file cannot be used.
RingWriter* recorder() noexcept;

// The interposer's path and CUDADIAG_* variables this process started with: what a new
// program of the run must get back when a launcher dropped them (exec_env.h).
const SavedEnv& saved_env() noexcept;

// Records what happened to a process of the run (ring_format.h, EventKind) in the file
// CUDADIAG_RING names; nothing without it.
void record_event(ring::EventKind kind, std::int32_t pid, const char* program) noexcept;

// A library was loaded with RTLD_DEEPBIND: its lookups of dlsym and of the driver's
// functions bind inside its own dependencies, past the interposer.
void note_deepbind_load(const char* file) noexcept;

// This process image ends (exit, or an exec replaces it): when libcuda is loaded but no
// CUDA call went through the interposer, or a library was loaded with RTLD_DEEPBIND,
// the CUDA this process used may not have been fenced: recorded once per process.
// Async-signal-safe once the library's constructor ran (exec hooks call it after fork).
void check_image_end() noexcept;

// Every hook starts here: settings read and ring attached (once), and "the program
// resolved a driver entry point" said in the file's header (once per process).
void note_cuda_seen() noexcept;
// Whether this process (not a parent it was forked from) went through note_cuda_seen.
bool cuda_seen_here() noexcept;

}  // namespace cudadiag::interposer

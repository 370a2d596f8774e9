#pragma once
// The environment a new program gets from exec or posix_spawn: when it lacks the
// interposer in LD_PRELOAD, or the CUDADIAG_* settings this process started with (a
// launcher that cleans the environment: env -i, sudo, Python's subprocess with env=,
// some MPI and ssh launchers), they are put back, so that the new program is fenced
// and recorded like the first one. Pure: no allocation (the caller gives the memory),
// no system call; compiled into the interposer and into the tests.
#include <cstddef>

namespace cudadiag::interposer {

inline constexpr const char* kInterposerName = "libcudadiag_fence.so";
inline constexpr int kMaxSavedVars = 32;

// What this process started with: the interposer's path as it was preloaded, and its
// CUDADIAG_* variables ("NAME=value"). The strings outlive every use.
struct SavedEnv {
  const char* preload_path = nullptr;
  const char* vars[kMaxSavedVars] = {};
  int count = 0;
};

// Whether an LD_PRELOAD value names the interposer (ld.so splits it on ' ' and ':').
bool preload_names_interposer(const char* value) noexcept;

struct Restoration {
  bool preload = false;   // LD_PRELOAD lacked the interposer
  int vars = 0;           // CUDADIAG_* variables that were missing
  std::size_t bytes = 0;  // memory restore_environment needs (0: nothing to restore)
};

// What `envp` (null: empty) lacks of `saved`.
Restoration missing_from(char* const envp[], const SavedEnv& saved) noexcept;

// Writes into `buffer` (r.bytes long) a copy of `envp` with the interposer first in
// LD_PRELOAD (the program's own entries kept after it) and the missing variables added;
// returns the new array (inside the buffer).
char** restore_environment(char* const envp[], const SavedEnv& saved, const Restoration& r, void* buffer) noexcept;

}  // namespace cudadiag::interposer

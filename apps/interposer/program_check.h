#pragma once
// Whether a program about to be executed can be followed by the interposer: the loader
// ignores LD_PRELOAD in a set-user-ID or set-group-ID program that changes this
// process's ids (or one with file capabilities). A statically linked program loads
// nothing at all, libcuda.so included: it cannot use CUDA, so it is no escape. A script
// is judged by its interpreter (#!, up to 4 levels, as the kernel does). No allocation: stack buffers and system calls only (it runs between
// vfork and exec too).
#include <cstddef>

#include "fence/ring_format.h"

namespace cudadiag::interposer {

// EventKind::none when the program can be followed (or it is not a program exec would
// run: exec fails and nothing escapes), else why not.
ring::EventKind escape_of(const char* path) noexcept;
// The same for an open file (fexecve, execveat with AT_EMPTY_PATH).
ring::EventKind escape_of_fd(int fd) noexcept;

// The file execvp/execlp/posix_spawnp would run for `file`: `file` itself when it holds
// a '/', else the first executable regular file along `path_list` (unset: /bin:/usr/bin).
// False when there is none. `out` gets at most `size` bytes.
bool find_on_path(const char* file, const char* path_list, char* out, std::size_t size) noexcept;

}  // namespace cudadiag::interposer

#pragma once
// The one directory walker, for code that may run in a signal handler: getdents64 on an
// open directory into a fixed buffer on the stack, no allocation, no lock, no stdio. Two
// callers need exactly that: scratch_dir's remove_scratch_dirs_now (the last stop
// signal's handler empties the scratch directories before _exit) and runner's
// process_tree (the stop escalation reads /proc from the handler). Both read directories
// here and nowhere else.
#include <fcntl.h>
#include <unistd.h>

#include <type_traits>

namespace cudadiag {

// Opens `name` (relative to the directory `at`, or AT_FDCWD) as a directory to read:
// O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, so a link as the last component is
// never followed. The fd, or -1 (errno says why). Async-signal-safe.
int open_directory(int at, const char* name) noexcept;

namespace detail {
// A plain function and its context: the walker is compiled once, out of line.
using DirEntryVisitor = void (*)(void* context, const char* name);
bool walk_dir_entries(int dir, DirEntryVisitor visit, void* context) noexcept;
}  // namespace detail

// Calls on_entry(const char* name) for every entry of the directory open as `dir`, "."
// and ".." left out, from the directory's current offset to its end; `dir` stays open.
// on_entry may remove the entry it was given (unlinkat(dir, name, ...)): every other
// entry is still visited once. The name is valid during the call only. False when
// reading failed (EINTR is retried). Async-signal-safe when on_entry is.
template <typename F>
bool for_each_dir_entry(int dir, F&& on_entry) noexcept {
  using Fn = std::remove_reference_t<F>;
  auto* context = const_cast<std::remove_const_t<Fn>*>(&on_entry);
  return detail::walk_dir_entries(
      dir, [](void* c, const char* name) { (*static_cast<Fn*>(c))(name); }, context);
}

// The same for the directory at `path` (open_directory, closed after). False when it
// cannot be opened as a directory (missing, not a directory, a link) or not read.
template <typename F>
bool for_each_dir_entry(const char* path, F&& on_entry) noexcept {
  const int dir = open_directory(AT_FDCWD, path);
  if (dir < 0) return false;
  const bool read = for_each_dir_entry(dir, on_entry);
  ::close(dir);
  return read;
}

}  // namespace cudadiag

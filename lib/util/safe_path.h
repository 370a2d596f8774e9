#pragma once
// Where a file may be written, decided the way a careful root tool decides it: the path
// is walked one component at a time from "/" (or the current directory) with openat and
// fstatat(AT_SYMLINK_NOFOLLOW), so the kernel never follows a link on our behalf, and
// what is met on the way is judged by the rules below, whatever the fs.protected_*
// sysctls say.
//
// A shared directory is one that others besides its owner may add names to: world-
// writable (sticky or not), or group-writable with the sticky bit (/tmp, /var/tmp,
// /dev/shm). These are the directories the kernel's protected_symlinks,
// protected_regular and protected_fifos rules guard.
//
// Symbolic links are followed, step by step under these same rules, 40 at most, only
// when the link belongs to the writer (the effective uid) or to the owner of the
// directory holding it. In a shared directory that is the kernel's protected_symlinks
// rule; elsewhere it refuses only a third party's link in a group-writable directory
// (a user's own links in their home, root's links anywhere, are followed as usual).
//
// The entry a path ends at may be replaced or written only when (check_writable):
//   - in a shared directory, it belongs to the writer or to the directory's owner (the
//     kernel's protected_regular / protected_fifos rule), and it is no device;
//   - it is no FIFO, no socket and no block device: a FIFO may hang an open or a write
//     and may belong to anyone, so a report never goes into one (use -o - and a pipe);
//   - a character device (/dev/null, /dev/full, a terminal) is written into only when
//     it belongs to root or to the writer.
// Every refusal is a UsageError "cannot write PATH: why" (exit 2).
#include <sys/stat.h>

#include <string>

#include "util/unique_fd.h"

namespace cudadiag {

// True for a directory that others may add names to (see above).
bool is_shared_directory(const struct stat& dir);

// Where a path leads: an open directory and, unless the path names a directory itself,
// the final name in it and what is there now.
struct ResolvedPath {
  UniqueFd dir;            // the directory holding `name` (O_PATH), or the directory named
  struct stat dir_stat {};
  std::string name;        // the last component, never a link; empty when the path is a directory
  bool exists = false;
  struct stat entry {};    // lstat of `name` when it exists: never a symbolic link
};

// Walks `path` as described above, following the links the rules allow. A missing final
// name is fine (exists == false); a missing directory on the way, a link refused, a loop
// (more than 40 links) or a component that is no directory throws UsageError naming
// `path` and the reason.
ResolvedPath resolve_path(const std::string& path);

// The directory `path` names, resolved the same way; throws UsageError when it is none.
UniqueFd open_directory(const std::string& path, struct stat* dir_stat = nullptr);

// What may be done with the entry `r` names (see above); throws UsageError naming `path`.
enum class WriteKind { create, replace, write_device };
WriteKind check_writable(const std::string& path, const ResolvedPath& r);

// The absolute path of an open descriptor, for messages ("?" when unknown).
std::string path_of(int fd);

}  // namespace cudadiag

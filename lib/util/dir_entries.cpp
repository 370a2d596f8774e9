#include "util/dir_entries.h"

#include <sys/syscall.h>

#include <cerrno>
#include <cstring>

namespace cudadiag {

int open_directory(int at, const char* name) noexcept {
  return ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

namespace detail {

bool walk_dir_entries(int dir, DirEntryVisitor visit, void* context) noexcept {
  // On the stack, one per level when a callback walks a subdirectory: scratch_dir goes
  // a few levels deep from a signal handler.
  alignas(8) char buf[4096];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) return true;
    for (long off = 0; off < got;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[]
      unsigned short reclen = 0;
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      visit(context, name);
    }
  }
}

}  // namespace detail
}  // namespace cudadiag

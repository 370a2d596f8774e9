#include "util/scratch_dir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/errors.h"

namespace cudadiag {
namespace {

// The live directories, for the signal handler: fixed buffers, a state per slot (free,
// being written, ready: the handler reads ready ones only).
constexpr int kSlots = 8;
constexpr std::size_t kPathMax = 4096;
enum SlotState : int { kFree = 0, kWriting = 1, kReady = 2 };
std::array<std::atomic<int>, kSlots> g_state{};
char g_paths[kSlots][kPathMax];

int register_path(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (g_state[i].compare_exchange_strong(expected, kWriting)) {
      std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
      g_state[i].store(kReady);
      return i;
    }
  }
  return -1;  // more than kSlots at once: only the destructor removes this one
}

// Empties the directory open as `dir` (depth levels of subdirectories at most), with
// plain system calls.
void empty_dir_at(int dir, int depth) noexcept {
  alignas(8) char buf[4096];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[]
      unsigned short reclen = 0;
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      if (::unlinkat(dir, name, 0) == 0 || errno != EISDIR) continue;
      if (depth > 0) {
        const int sub = ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
          empty_dir_at(sub, depth - 1);
          ::close(sub);
        }
      }
      ::unlinkat(dir, name, AT_REMOVEDIR);
    }
  }
}

}  // namespace

ScratchDir::ScratchDir(const std::string& purpose) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/cudadiag-" + purpose + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw EnvironmentError("cannot create a scratch directory under " + tmpl);
  path_ = tmpl;
  slot_ = register_path(path_);
}

ScratchDir::~ScratchDir() {
  if (slot_ >= 0) g_state[slot_].store(kFree);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void remove_scratch_dirs_now() noexcept {
  for (int i = 0; i < kSlots; ++i) {
    if (g_state[i].load() != kReady) continue;
    const int dir = ::open(g_paths[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) continue;
    empty_dir_at(dir, 4);
    ::close(dir);
    ::rmdir(g_paths[i]);
  }
}

}  // namespace cudadiag

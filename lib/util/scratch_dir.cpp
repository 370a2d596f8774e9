#include "util/scratch_dir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/dir_entries.h"
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
// plain system calls (util/dir_entries.h).
void empty_dir_at(int dir, int depth) noexcept {
  for_each_dir_entry(dir, [dir, depth](const char* name) {
    if (::unlinkat(dir, name, 0) == 0 || errno != EISDIR) return;
    if (depth > 0) {
      const int sub = open_directory(dir, name);
      if (sub >= 0) {
        empty_dir_at(sub, depth - 1);
        ::close(sub);
      }
    }
    ::unlinkat(dir, name, AT_REMOVEDIR);
  });
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
    const int dir = open_directory(AT_FDCWD, g_paths[i]);
    if (dir < 0) continue;
    empty_dir_at(dir, 4);
    ::close(dir);
    ::rmdir(g_paths[i]);
  }
}

}  // namespace cudadiag

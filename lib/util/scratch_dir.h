#pragma once
// A private scratch directory under $TMPDIR (default /tmp) for files children write
// (sanitizer XML, the interposer's rings), removed with everything in it when the
// object goes, however the command leaves: also on the last stop signal, which exits
// without unwinding (remove_scratch_dirs_now, from the signal handler).
#include <string>

namespace cudadiag {

class ScratchDir {
 public:
  // "<tmp>/cudadiag-<purpose>-XXXXXX"; throws EnvironmentError when it cannot be made.
  explicit ScratchDir(const std::string& purpose);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int slot_ = -1;  // in the registry the signal handler reads
};

// Async-signal-safe: removes every scratch directory alive now (a few levels deep, links
// never followed). For a handler that is about to _exit.
void remove_scratch_dirs_now() noexcept;

}  // namespace cudadiag

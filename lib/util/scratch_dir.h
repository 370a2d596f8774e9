#pragma once
// A private scratch directory under $TMPDIR (default /tmp) for files children write
// (sanitizer XML, the interposer's rings), removed with everything in it when the
// object goes, however the command leaves.
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
};

}  // namespace cudadiag

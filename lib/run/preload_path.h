#pragma once
// ld.so splits LD_PRELOAD on spaces and colons: an interposer installed under a path that
// holds either would never load (and the fence rung would see nothing). Such a path is
// preloaded through a link at a safe path instead: in the run's scratch directory, or,
// when that path is not safe either (a TMPDIR with a space), in a fresh private
// directory under /tmp, removed with the object.
#include <string>
#include <string_view>

namespace cudadiag::run {

// Whether ld.so takes `path` as one LD_PRELOAD entry.
bool preload_safe(std::string_view path);

class PreloadPath {
 public:
  // `interposer`: the library's path (absolute); `scratch_dir`: the run's private
  // directory. Throws EnvironmentError when no link can be made.
  PreloadPath(const std::string& interposer, const std::string& scratch_dir);
  ~PreloadPath();
  PreloadPath(const PreloadPath&) = delete;
  PreloadPath& operator=(const PreloadPath&) = delete;

  // What LD_PRELOAD names: the interposer itself when its path is safe, else the link.
  const std::string& path() const { return path_; }
  bool linked() const { return !link_.empty(); }

 private:
  std::string path_;
  std::string link_;
  std::string own_dir_;  // the private directory made here, if any
};

}  // namespace cudadiag::run

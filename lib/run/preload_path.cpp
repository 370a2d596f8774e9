#include "run/preload_path.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/errors.h"

namespace cudadiag::run {

bool preload_safe(std::string_view path) {
  return !path.empty() && path.find_first_of(" :") == std::string_view::npos;
}

PreloadPath::PreloadPath(const std::string& interposer, const std::string& scratch_dir) : path_(interposer) {
  if (interposer.empty() || preload_safe(interposer)) return;
  std::string dir = scratch_dir;
  if (!preload_safe(dir)) {
    std::string tmpl = "/tmp/cudadiag-preload-XXXXXX";
    if (!::mkdtemp(tmpl.data()))
      throw EnvironmentError("cannot create a directory under /tmp for a link to the interposer: " +
                             std::string(std::strerror(errno)));
    own_dir_ = dir = tmpl;
  }
  const std::string name = std::filesystem::path(interposer).filename().string();
  link_ = dir + "/" + name;
  if (::symlink(interposer.c_str(), link_.c_str()) != 0)
    throw EnvironmentError("cannot link the interposer " + interposer + " at " + link_ + ": " + std::strerror(errno));
  path_ = link_;
}

PreloadPath::~PreloadPath() {
  if (!link_.empty()) ::unlink(link_.c_str());
  if (!own_dir_.empty()) ::rmdir(own_dir_.c_str());
}

}  // namespace cudadiag::run

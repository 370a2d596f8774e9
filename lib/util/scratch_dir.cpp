#include "util/scratch_dir.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "util/errors.h"

namespace cudadiag {

ScratchDir::ScratchDir(const std::string& purpose) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/cudadiag-" + purpose + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw EnvironmentError("cannot create a scratch directory under " + tmpl);
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cudadiag

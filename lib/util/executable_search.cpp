#include "util/executable_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

namespace cudadiag {

std::vector<std::string> split_search_path(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty()) out.push_back(dir);
  return out;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace cudadiag

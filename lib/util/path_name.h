#pragma once
// The last component of a path, as text ("libc.so.6" of "/usr/lib/libc.so.6"; the path
// itself when it has no slash). No file system access.
#include <string>
#include <string_view>

namespace cudadiag {

inline std::string base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace cudadiag

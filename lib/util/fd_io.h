#pragma once
// Whole writes to a file descriptor: a short write goes on, EINTR retries.
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace cudadiag {

// True when all n bytes were written; false at the first error (errno says which).
inline bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

inline bool write_all(int fd, std::string_view text) { return write_all(fd, text.data(), text.size()); }

}  // namespace cudadiag

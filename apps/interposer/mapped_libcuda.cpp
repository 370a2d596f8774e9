#include "apps/interposer/mapped_libcuda.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cudadiag::interposer {

const char* libcuda_path_in_maps_line(const char* line, std::size_t length, std::size_t& path_length) noexcept {
  // "begin-end perms offset dev inode   path": the path is the first '/' of the line.
  const char* path = static_cast<const char*>(std::memchr(line, '/', length));
  if (!path) return nullptr;
  const std::size_t n = length - static_cast<std::size_t>(path - line);
  const char* base = path;
  for (std::size_t i = 0; i < n; ++i)
    if (path[i] == '/') base = path + i + 1;
  const std::size_t base_length = n - static_cast<std::size_t>(base - path);
  if (base_length < 10 || std::memcmp(base, "libcuda.so", 10) != 0) return nullptr;
  path_length = n;
  return path;
}

bool find_mapped_libcuda(char* out, std::size_t size) noexcept {
  int fd;
  do {
    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return false;
  // Lines are read into a window; one longer than the window (a path near PATH_MAX) is
  // skipped whole.
  char buffer[8192];
  std::size_t held = 0;
  bool skipping = false, found = false;
  for (;;) {
    const ssize_t got = read(fd, buffer + held, sizeof buffer - held);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    held += static_cast<std::size_t>(got);
    std::size_t start = 0;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(buffer + start, '\n', held - start));
      if (!nl) break;
      const std::size_t length = static_cast<std::size_t>(nl - (buffer + start));
      std::size_t path_length = 0;
      const char* path = skipping ? nullptr : libcuda_path_in_maps_line(buffer + start, length, path_length);
      skipping = false;
      start += length + 1;
      if (path) {
        const std::size_t n = path_length < size - 1 ? path_length : size - 1;
        std::memcpy(out, path, n);
        out[n] = '\0';
        found = true;
        break;
      }
    }
    if (found) break;
    if (start == 0 && held == sizeof buffer) {
      skipping = true;  // the rest of this line arrives with the next read
      held = 0;
    } else {
      std::memmove(buffer, buffer + start, held - start);
      held -= start;
    }
  }
  close(fd);
  return found;
}

}  // namespace cudadiag::interposer

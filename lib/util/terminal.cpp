#include "util/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace cudadiag::text {

bool no_color(const char* value) { return value != nullptr && value[0] != '\0'; }

bool no_color_from_env() { return no_color(std::getenv("NO_COLOR")); }

std::size_t columns_for(const char* columns_env, std::size_t terminal) {
  std::size_t width = 0;
  if (columns_env != nullptr && columns_env[0] != '\0') {
    const char* end = columns_env + std::strlen(columns_env);
    std::size_t v = 0;
    const auto [ptr, ec] = std::from_chars(columns_env, end, v);
    if (ec == std::errc{} && ptr == end && v > 0) width = v;
  }
  if (width == 0) width = terminal;
  if (width == 0) width = 80;
  return std::clamp(width, kMinColumns, kMaxColumns);
}

std::size_t terminal_width(int fd) {
  if (::isatty(fd) == 0) return 0;
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}

std::size_t columns_from_env(int fd) { return columns_for(std::getenv("COLUMNS"), terminal_width(fd)); }

}  // namespace cudadiag::text

#include "apps/interposer/debug_log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace cudadiag::interposer {
namespace {
std::atomic<bool> g_enabled{false};

// "cudadiag-fence[pid]: <what><format's text>\n" to stderr in one write, so that lines of
// concurrent threads do not interleave; cut at 511 bytes.
void write_line(const char* what, const char* format, va_list args) noexcept {
  char line[512];
  int n = std::snprintf(line, sizeof line, "cudadiag-fence[%d]: %s", static_cast<int>(getpid()), what);
  if (n < 0) return;
  if (n > static_cast<int>(sizeof line) - 2) n = static_cast<int>(sizeof line) - 2;
  const int m = std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), format, args);
  if (m < 0) return;
  n = n + m < static_cast<int>(sizeof line) - 1 ? n + m : static_cast<int>(sizeof line) - 2;
  line[n++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, static_cast<size_t>(n));
  (void)ignored;
}

}  // namespace

void enable_debug_log(bool on) noexcept { g_enabled.store(on, std::memory_order_relaxed); }

bool debug_log_enabled() noexcept { return g_enabled.load(std::memory_order_relaxed); }

void debug_log(const char* format, ...) noexcept {
  if (!debug_log_enabled()) return;
  va_list args;
  va_start(args, format);
  write_line("", format, args);
  va_end(args);
}

void internal_error(const char* format, ...) noexcept {
  va_list args;
  va_start(args, format);
  write_line("internal error: ", format, args);
  va_end(args);
  std::abort();
}

}  // namespace cudadiag::interposer

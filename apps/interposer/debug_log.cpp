#include "apps/interposer/debug_log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace cudadiag::interposer {
namespace {
std::atomic<bool> g_enabled{false};
}  // namespace

void enable_debug_log(bool on) noexcept { g_enabled.store(on, std::memory_order_relaxed); }

bool debug_log_enabled() noexcept { return g_enabled.load(std::memory_order_relaxed); }

void debug_log(const char* format, ...) noexcept {
  if (!debug_log_enabled()) return;
  char line[512];
  int n = std::snprintf(line, sizeof line, "cudadiag-fence[%d]: ", static_cast<int>(getpid()));
  if (n < 0) return;
  va_list args;
  va_start(args, format);
  const int m = std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), format, args);
  va_end(args);
  if (m < 0) return;
  n = n + m < static_cast<int>(sizeof line) - 1 ? n + m : static_cast<int>(sizeof line) - 2;
  line[n++] = '\n';
  // One write: lines of concurrent threads do not interleave.
  ssize_t ignored = write(STDERR_FILENO, line, static_cast<size_t>(n));
  (void)ignored;
}

}  // namespace cudadiag::interposer

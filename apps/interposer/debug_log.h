#pragma once
// Diagnostics of the interposer: to stderr, and only with CUDADIAG_FENCE_DEBUG=1 (the
// program's own output must stay exactly what it would be without the interposer).
namespace cudadiag::interposer {

void enable_debug_log(bool on) noexcept;
bool debug_log_enabled() noexcept;
void debug_log(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace cudadiag::interposer

#pragma once
// Diagnostics of the interposer: to stderr, and only with CUDADIAG_FENCE_DEBUG=1 (the
// program's own output must stay exactly what it would be without the interposer).
namespace cudadiag::interposer {

void enable_debug_log(bool on) noexcept;
bool debug_log_enabled() noexcept;
void debug_log(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

// A state the interposer's own invariants rule out: said on stderr whatever the debug
// setting ("cudadiag-fence[pid]: internal error: ..."), then abort(). Going on would
// hand the program memory the fence no longer describes.
[[noreturn]] void internal_error(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace cudadiag::interposer

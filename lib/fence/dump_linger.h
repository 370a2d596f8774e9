#pragma once
// A run armed for a GPU core dump stays alive at its end until the dump is written.
//
// A store onto unmapped memory faults after its warp has moved on. With dumps armed, the
// program's synchronize then returns cudaSuccess and the driver writes the dump later,
// on its own, only while the process is still alive: on an H100 (driver 580.159.04) a
// program that exited right after its synchronize left no dump, one that stayed 5 s left
// it and was then aborted by the driver (exit 134); `cudadiag run`'s site run of
// tests/programs/oob_write.cu kept no dump three times out of three
// (scripts/device/store-dump-probe.sh). So the parent sets kDumpLingerVar (milliseconds)
// beside the driver's variables, and whoever ends the process (the fence interposer at
// the program's exit, cudadiag's own site-run children after their case) waits here,
// polling for the process's own dump file: until it appears and then stops growing (the
// driver normally aborts the process first), or until the time is up.
//
// Header-only and POSIX-only, allocating nothing: apps/interposer links no C++ library
// and may run this inside exit().
#include <sys/stat.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace cudadiag::fence {

// Set by the parent, with the driver's variables, in a run armed for a dump: how long the
// process may wait at its end for its dump to appear (decimal milliseconds, 1..kMaxDumpLingerMs).
inline constexpr const char* kDumpLingerVar = "CUDADIAG_DUMP_LINGER_MS";
inline constexpr std::uint32_t kMaxDumpLingerMs = 60000;
// What the parent asks for: on an H100 (driver 580.159.04) a store's dump was there for
// a program that stayed 5 s after its synchronize, and never for one that exited at
// once. A process with no dump coming pays it once, at its end.
inline constexpr std::uint32_t kDumpLingerMs = 5000;
// Once the dump exists: how long its size must stay the same to count as written, and
// how long in all the wait may last (the driver aborts the process when it is done).
inline constexpr std::uint32_t kDumpSettleMs = 1000;
inline constexpr std::uint32_t kDumpWriteCapMs = 60000;
inline constexpr std::uint32_t kDumpPollMs = 20;

// CUDA_COREDUMP_FILE's value with every "%p" replaced by `pid`: where this process's dump
// goes. False when the result does not fit in `cap` bytes (NUL included) or the pattern
// holds another '%' directive (%h, %t: cudadiag arms none of them, and a guess would poll
// the wrong file).
inline bool own_dump_path(const char* pattern, long pid, char* out, std::size_t cap) noexcept {
  if (pattern == nullptr || cap == 0) return false;
  char digits[24];
  std::size_t nd = 0;
  unsigned long v = pid < 0 ? 0ul : static_cast<unsigned long>(pid);
  do {
    digits[nd++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && nd < sizeof digits);
  std::size_t o = 0;
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (*p == '%') {
      if (p[1] != 'p') return false;
      for (std::size_t i = nd; i > 0; --i) {
        if (o + 1 >= cap) return false;
        out[o++] = digits[i - 1];
      }
      ++p;
      continue;
    }
    if (o + 1 >= cap) return false;
    out[o++] = *p;
  }
  out[o] = '\0';
  return true;
}

// A strict decimal in [1, kMaxDumpLingerMs]; 0 for anything else (not armed).
inline std::uint32_t parse_linger_ms(const char* text) noexcept {
  if (text == nullptr || *text == '\0') return 0;
  std::uint64_t v = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return 0;
    v = v * 10 + static_cast<std::uint64_t>(*p - '0');
    if (v > kMaxDumpLingerMs) return 0;
  }
  return static_cast<std::uint32_t>(v);
}

enum class LingerEnd : std::uint8_t {
  not_armed,     // no linger asked for, or no dump file to look for
  no_dump,       // the time was up and no dump had appeared
  dump_written,  // the dump appeared and stopped growing (the driver did not end the process)
  dump_growing,  // the dump was still growing when kDumpWriteCapMs was up
};

inline std::uint64_t linger_now_ms() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000u + static_cast<std::uint64_t>(t.tv_nsec) / 1000000u;
}

inline void linger_sleep_ms(std::uint32_t ms) noexcept {
  timespec t{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

// Waits up to `budget_ms` for `path` to appear; once it has, until its size has not
// changed for `settle_ms`, at most `cap_ms` after it appeared.
inline LingerEnd linger_for_dump(const char* path, std::uint32_t budget_ms, std::uint32_t settle_ms = kDumpSettleMs,
                                 std::uint32_t cap_ms = kDumpWriteCapMs) noexcept {
  if (path == nullptr || budget_ms == 0) return LingerEnd::not_armed;
  const std::uint64_t start = linger_now_ms();
  struct stat st {};
  while (stat(path, &st) != 0) {
    if (linger_now_ms() - start >= budget_ms) return LingerEnd::no_dump;
    linger_sleep_ms(kDumpPollMs);
  }
  const std::uint64_t appeared = linger_now_ms();
  std::uint64_t changed = appeared;
  off_t size = st.st_size;
  for (;;) {
    const std::uint64_t now = linger_now_ms();
    if (now - changed >= settle_ms) return LingerEnd::dump_written;
    if (now - appeared >= cap_ms) return LingerEnd::dump_growing;
    linger_sleep_ms(kDumpPollMs);
    if (stat(path, &st) == 0 && st.st_size != size) {
      size = st.st_size;
      changed = linger_now_ms();
    }
  }
}

// The linger of this process as the environment asks for it (kDumpLingerVar and
// CUDA_COREDUMP_FILE; the driver's CUDA_ENABLE_COREDUMP_ON_EXCEPTION must be on).
inline LingerEnd linger_if_armed(long pid) noexcept {
  const char* enabled = std::getenv("CUDA_ENABLE_COREDUMP_ON_EXCEPTION");
  if (enabled == nullptr || enabled[0] != '1' || enabled[1] != '\0') return LingerEnd::not_armed;
  const std::uint32_t budget = parse_linger_ms(std::getenv(kDumpLingerVar));
  if (budget == 0) return LingerEnd::not_armed;
  char path[4096];
  if (!own_dump_path(std::getenv("CUDA_COREDUMP_FILE"), pid, path, sizeof path)) return LingerEnd::not_armed;
  return linger_for_dump(path, budget);
}

}  // namespace cudadiag::fence

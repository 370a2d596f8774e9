#pragma once
// How a child process ended, as the runner decodes it, and its word (the report's
// child.ending reads and writes these words; report::ChildEnding is this type).
#include <cstdint>
#include <optional>
#include <string_view>

namespace cudadiag::runner {

enum class Ending : std::uint8_t {
  result,        // the child wrote a result and exited 0
  exit_code,     // exited with a non-zero code (or 0 without a result: see no_result); "exit"
  signal,        // killed by a signal it did not expect (SIGSEGV, SIGABRT, ...)
  timeout,       // passed its deadline and was terminated
  no_result,     // exited 0 but wrote nothing on the result fd
  spawn_failed,  // posix_spawn failed (executable missing, ...)
};

std::string_view to_string(Ending e);
std::optional<Ending> parse_ending(std::string_view text);

}  // namespace cudadiag::runner

#pragma once
// The one stop path of every command: SIGINT, SIGTERM and SIGHUP set a flag that the
// scheduler and every phase boundary read; nothing more starts, what runs is ended
// after a grace, and the report is written with what finished, marked interrupted.
// A second signal exits at once (children live in their own process groups and are
// ended by their deadlines).
#include <atomic>
#include <chrono>

namespace cudadiag {

// How long a running child may go on after a stop request before it is terminated: an
// interrupted command ends within a second.
inline constexpr std::chrono::milliseconds kStopGrace{300};

// Installs the handlers (idempotent).
void install_stop_handlers();

// The flag the handlers set; the executor reads it.
const std::atomic<bool>& stop_flag();
bool stop_requested();
// The signal that asked to stop (0: none).
int stop_signal();

// For tests and for commands that stop themselves.
void request_stop(int sig = 0);
void clear_stop();

}  // namespace cudadiag

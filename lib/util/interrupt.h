#pragma once
// The one stop path of every command: SIGINT, SIGTERM and SIGHUP set a flag that the
// scheduler and every phase boundary read; nothing more starts, running children get
// SIGTERM at once and SIGKILL kStopGrace later, and the report is written with what
// finished, marked interrupted. A second signal asks for every running child to be
// killed now (the command still reaps them, writes its report and removes its scratch
// files); only a third exits at once, after killing every child's process group and
// whatever they left behind (the escalation hook the runner installs) and removing the
// scratch directories (scratch_dir.h); it writes no report.
#include <atomic>
#include <chrono>

namespace cudadiag {

// How long a running child may go on after SIGTERM on a stop request before SIGKILL: an
// interrupted command ends within a second.
inline constexpr std::chrono::milliseconds kStopGrace{300};

// Installs the handlers (idempotent).
void install_stop_handlers();

// Called from the signal handler on the second signal (level 2) and on the third (level
// 3, just before _exit): it must be async-signal-safe.
using StopEscalation = void (*)(int level);
void set_stop_escalation(StopEscalation hook);

// The flag the handlers set; the executor reads it.
const std::atomic<bool>& stop_flag();
bool stop_requested();
// The signal that asked to stop (0: none).
int stop_signal();

// For tests and for commands that stop themselves.
void request_stop(int sig = 0);
void clear_stop();

}  // namespace cudadiag

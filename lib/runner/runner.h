#pragma once
// Child processes: posix_spawn (never fork without exec), an explicit environment,
// bounded capture of stdout/stderr, a result pipe on a fixed fd, a deadline
// (SIGTERM to the process group, grace, SIGKILL), and a decoded ending. When a child
// ends, whatever it left behind (descendants that outlived it, in its process group or
// in a group or session of their own) is killed and reaped, and named in its outcome:
// the runner makes its process a child subreaper, so such descendants are reparented
// to it (process_tree.h). Nothing here calls CUDA.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/ending.h"

namespace cudadiag::runner {

// The fd a child of ours writes its result to, and the variable that tells it the number.
inline constexpr int kResultFd = 3;
inline constexpr const char* kResultFdEnv = "CUDADIAG_RESULT_FD";

struct ChildSpec {
  std::vector<std::string> argv;               // argv[0] is the executable path
  std::map<std::string, std::string> env_set;  // set or override in the child
  std::vector<std::string> env_unset;          // removed from the inherited environment
  std::chrono::milliseconds deadline{60000};   // wall time before SIGTERM
  std::chrono::milliseconds grace{2000};       // SIGTERM -> SIGKILL
  size_t capture_limit = 64 * 1024;            // per stream: head and tail kept, middle dropped
  size_t result_limit = 16 * 1024 * 1024;      // bytes read from the result fd at most
  int result_fd = kResultFd;                   // fd number the child writes its result to
  std::string result_fd_env = kResultFdEnv;    // env var telling the child that number
  // false: no result pipe at all, for a program that is not ours: no fd result_fd, and
  // result_fd_env absent from its environment (removed when inherited).
  bool result_pipe = true;
  std::string label;                           // for logs
  int lane = -1;                               // the GPU it is bound to (PoolOptions::lanes); -1: none
  // At the deadline, before SIGTERM: at_deadline(pid) runs once (the child is still
  // alive: ask it for a dump, a stack), then SIGTERM waits while deadline_wait() returns
  // true, polled every round, deadline_hook_budget at most. The child may end meanwhile;
  // it still ends as a timeout. Not called on a stop request.
  std::function<void(pid_t)> at_deadline;
  std::function<bool()> deadline_wait;
  std::chrono::milliseconds deadline_hook_budget{0};
};

// Bounded capture: the first capture_limit/2 bytes and the last capture_limit/2 bytes.
struct Capture {
  std::string head;
  std::string tail;
  unsigned long long total_bytes = 0;
  unsigned long long dropped_bytes = 0;
  // head + "\n[... N bytes dropped ...]\n" + tail (or just the whole text when nothing dropped)
  std::string text() const;
};

// A descendant of a child still alive when the child ended: killed (SIGKILL) and reaped
// at the end of the run.
struct StrayProcess {
  pid_t pid = 0;
  std::string command;        // its command name (/proc/<pid>/stat, at most 15 bytes)
  bool left_group = false;    // not in the child's process group
  bool left_session = false;  // in a session of its own (setsid)
  // "left the process group and session; killed at the end of the run"
  std::string note() const;
};

struct ChildOutcome {
  Ending ending = Ending::spawn_failed;
  pid_t pid = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string signal_name;        // "SIGSEGV"
  bool killed_after_grace = false;  // timeout: SIGTERM was ignored, SIGKILL needed
  bool unkillable = false;        // timeout: still alive 10 s after SIGKILL (stuck in the
                                  // kernel, e.g. the GPU driver); abandoned, never reaped
  std::string result;             // everything read from the result fd (may be partial)
  bool result_truncated = false;
  Capture out;
  Capture err;
  std::vector<StrayProcess> strays;  // descendants left alive when it ended, killed then
  std::size_t strays_unnamed = 0;    // more of them, past the named ones
  std::string spawn_error;        // strerror of posix_spawn when spawn_failed
  int spawn_errno = 0;            // its errno (E2BIG: argv too long, ENOENT: no executable)
  std::chrono::system_clock::time_point started;
  std::chrono::system_clock::time_point finished;
  double wall_ms = 0.0;
};

// "SIGSEGV" for 11, "SIG34" for unnamed ones.
std::string signal_name(int sig);

// Runs one child to completion. Never throws for anything the child does.
ChildOutcome run_child(const ChildSpec& spec);
// The same, ended early when *stop becomes true: SIGTERM to its process group at once,
// SIGKILL `stop_grace` later (or at once, on a second stop signal); it ends as timeout.
ChildOutcome run_child(const ChildSpec& spec, const std::atomic<bool>* stop, std::chrono::milliseconds stop_grace);

// Runs many children, at most `jobs` at once. A work queue: on_done (called on the
// thread that called run(), as each child finishes) may submit() more specs, e.g. the
// cases after a sticky error re-run in a fresh child. When *stop becomes true, no new
// child is started; running ones get SIGTERM at once and SIGKILL `stop_grace` later (at
// once on a second stop signal) and are reported as timeout. Never-started specs get no
// callback.
// With lanes > 1, each spec's lane (its GPU) has its own share of the jobs and its own
// queue order (runner/lane_share.h).
struct PoolOptions {
  int jobs = 1;
  const std::atomic<bool>* stop = nullptr;
  std::chrono::milliseconds stop_grace{300};
  size_t lanes = 0;
};

class Pool {
 public:
  explicit Pool(PoolOptions opts);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Queues a child; returns its id (0, 1, 2, ... in submission order).
  size_t submit(ChildSpec spec);
  // Runs until the queue is empty and no child is running (or stop was requested).
  void run(const std::function<void(size_t id, const ChildOutcome&)>& on_done);
  // Specs submitted but never started (after a stop).
  std::vector<size_t> not_started() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace cudadiag::runner

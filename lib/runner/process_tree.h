#pragma once
// The processes a run leaves behind, and the registry of the children running now.
//
// cudadiag is a child subreaper (PR_SET_CHILD_SUBREAPER): a descendant of a child whose
// parent dies is reparented to cudadiag, not to init, even when it left the child's
// process group or session. After a child ends, whatever is left of its tree therefore
// hangs below cudadiag's own direct children: killing those (SIGKILL), whose children
// are then reparented to cudadiag in turn, ends the whole tree in a few rounds without
// walking /proc.
//
// Direct children that the runner tracks (a child another thread still waits on) are
// never touched: only pids that are not tracked are killed and reaped, each with
// waitpid on that pid. Spawning and registering happen under one lock that the sweep
// also holds, so a child just spawned is never taken for a leftover.
//
// The registry is a fixed array of atomics: a signal handler can read it (the stop
// escalation: the second signal asks every running child to be killed now, the third
// kills every child's group and every leftover itself before exiting).
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/runner.h"

namespace cudadiag::runner::detail {

// One line of /proc/<pid>/stat, the fields used here.
struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  char state = '?';    // R, S, D, Z, T, ...
  std::string comm;    // the command name (at most 15 bytes; may hold spaces and ')')
};

// Parses "<pid> (<comm>) <state> <ppid> <pgid> <sid> ..."; comm ends at the last ')'.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// Makes this process a child subreaper and installs the stop escalation (once; every
// spawn calls it).
void prepare_process_tree();

// The lock held across posix_spawn + track(), and by every sweep round.
std::mutex& spawn_lock();

// A tracked child: its slot in the registry (-1: the registry was full).
class TrackedChild {
 public:
  TrackedChild() = default;
  ~TrackedChild() { release(); }
  TrackedChild(const TrackedChild&) = delete;
  TrackedChild& operator=(const TrackedChild&) = delete;
  // The second stop signal asked for this child to be killed now.
  bool kill_requested() const;
  // Right after posix_spawn, with spawn_lock() held.
  void track(pid_t pid);
  // After the child was reaped.
  void release();
  // A child that cannot be reaped (it survived SIGKILL) stays registered for good.
  void abandon() { slot_ = -1; }

 private:
  int slot_ = -1;
};

// How many children are tracked now.
std::size_t tracked_count();

// Every process left by the run whose child led process group `run_pgid` (already
// reaped): killed with SIGKILL, reaped, and named (at most `max_named`; `unnamed` counts
// the rest). Those still in the group are named only when `name_group_members` (the
// child exited on its own; when we ended it, its group was being ended too). Leftovers
// that cannot be told apart from another running child's (several children at once,
// outside every child's group) are left to the sweep of the last child to end. Bounded
// by `budget`.
void sweep_leftovers(pid_t run_pgid, bool name_group_members, std::vector<StrayProcess>& named,
                     std::size_t& unnamed, std::chrono::milliseconds budget, std::size_t max_named = 32);

// Async-signal-safe: asks every tracked child to be killed now (its loop does it).
void request_kill_all() noexcept;
// Async-signal-safe: SIGKILL to every tracked child's group, then every leftover of
// theirs, for a bounded time. For the last signal, just before _exit.
void kill_everything_now() noexcept;

}  // namespace cudadiag::runner::detail

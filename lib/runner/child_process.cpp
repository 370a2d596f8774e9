// One child process from spawn to decoded ending. The loop drains every pipe until
// EOF (a child that writes more than a pipe buffer must never block on us), reaps
// the child with WNOHANG, and escalates SIGTERM -> SIGKILL on the process group. When
// the child is gone, what it left behind is killed, reaped and named (process_tree.h).
#include "runner/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <spdlog/spdlog.h>

#include "runner/bounded_capture.h"
#include "runner/environment.h"
#include "runner/process_tree.h"

namespace cudadiag::runner {

namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

// Pipe fds are moved above this so that dup2 onto 0..2 and result_fd never
// meets an fd that already has that number.
constexpr int kFirstPrivateFd = 64;

// How long a child may survive SIGKILL before we stop waiting for it.
constexpr std::chrono::seconds kUnkillableWait{10};

// After a child exited on its own, how long a descendant still holding its pipes may go
// on writing before it is ended with the rest of what the child left.
constexpr std::chrono::milliseconds kPipeHolderWait{500};
// How long the processes a child left may take to die after SIGKILL.
constexpr std::chrono::milliseconds kLeftoverBudget{2000};
// After the leftovers are killed: the last bytes still in the pipes.
constexpr std::chrono::milliseconds kFinalDrain{200};

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// A close-on-exec pipe whose ends live above kFirstPrivateFd.
bool make_pipe(Fd& read_end, Fd& write_end, std::string& error) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    error = std::string("pipe2: ") + std::strerror(errno);  // e.g. EMFILE: too many open files
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    int moved = ::fcntl(p[i], F_DUPFD_CLOEXEC, kFirstPrivateFd);
    if (moved < 0) {
      error = std::string("fcntl(F_DUPFD_CLOEXEC): ") + std::strerror(errno);
      ::close(p[0]);
      ::close(p[1]);
      return false;
    }
    ::close(p[i]);
    p[i] = moved;
  }
  read_end.fd = p[0];
  write_end.fd = p[1];
  return true;
}

// posix_spawn attribute and file-action objects, destroyed on every path. Every setup
// call is checked: the first failure is kept as "call: reason" for the child's ending.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  bool actions_ready = false, attr_ready = false;
  std::string error;
  int error_code = 0;

  SpawnSetup() {
    actions_ready = check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init");
    attr_ready = check(posix_spawnattr_init(&attr), "posix_spawnattr_init");
  }
  ~SpawnSetup() {
    if (actions_ready) posix_spawn_file_actions_destroy(&actions);
    if (attr_ready) posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // rc: the call's return value (an errno value, 0 on success).
  bool check(int rc, const std::string& call) {
    if (rc != 0 && error.empty()) {
      error = call + ": " + std::strerror(rc);
      error_code = rc;
    }
    return rc == 0;
  }
  bool ok() const { return error.empty(); }
};

// Own process group (so the deadline reaches grandchildren too), an empty signal
// mask and default dispositions whatever the parent has set up.
void configure_attributes(SpawnSetup& s) {
  if (!s.attr_ready) return;
  s.check(posix_spawnattr_setpgroup(&s.attr, 0), "posix_spawnattr_setpgroup");
  sigset_t empty;
  sigemptyset(&empty);
  s.check(posix_spawnattr_setsigmask(&s.attr, &empty), "posix_spawnattr_setsigmask");
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM,
                  SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTSTP, SIGTTIN, SIGTTOU})
    sigaddset(&defaults, sig);
  s.check(posix_spawnattr_setsigdefault(&s.attr, &defaults), "posix_spawnattr_setsigdefault");
  s.check(posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF),
          "posix_spawnattr_setflags");
}

pid_t waitpid_nohang(pid_t pid, int& status) {
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The three streams read by the loop; a slot is closed (fd -1) after EOF.
struct Streams {
  Fd out, err, result;
  BoundedCapture out_capture, err_capture;
  std::string result_bytes;
  bool result_truncated = false;
  size_t result_limit;

  Streams(size_t capture_limit, size_t result_limit_)
      : out_capture(capture_limit), err_capture(capture_limit), result_limit(result_limit_) {}

  bool open() const { return out.fd >= 0 || err.fd >= 0 || result.fd >= 0; }

  void consume(Fd& fd, const char* data, size_t n) {
    if (&fd == &out) {
      out_capture.append(data, n);
    } else if (&fd == &err) {
      err_capture.append(data, n);
    } else {
      const size_t room = result_limit - std::min(result_limit, result_bytes.size());
      result_bytes.append(data, std::min(room, n));
      if (n > room) result_truncated = true;
    }
  }

  // One poll round of at most timeout_ms; reads whatever is ready.
  void pump(int timeout_ms) {
    std::array<Fd*, 3> slots{&out, &err, &result};
    std::array<pollfd, 3> fds{};
    std::array<Fd*, 3> owners{};
    nfds_t n = 0;
    for (Fd* s : slots) {
      if (s->fd < 0) continue;
      fds[n] = pollfd{s->fd, POLLIN, 0};
      owners[n++] = s;
    }
    if (n == 0) {
      if (timeout_ms > 0) ::poll(nullptr, 0, timeout_ms);
      return;
    }
    int r = ::poll(fds.data(), n, timeout_ms);
    if (r <= 0) return;  // timeout, or EINTR: the caller loops
    char buf[65536];
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t got = ::read(owners[i]->fd, buf, sizeof buf);
      if (got > 0) {
        consume(*owners[i], buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        owners[i]->reset();  // EOF or a broken pipe: nothing more will come
      }
    }
  }
};

void decode_status(int status, bool timed_out, ChildOutcome& o) {
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    o.signal = WTERMSIG(status);
    o.signal_name = signal_name(*o.signal);
  }
  if (timed_out) {
    o.ending = Ending::timeout;
  } else if (o.signal) {
    o.ending = Ending::signal;
  } else if (o.exit_code.value_or(-1) != 0) {
    o.ending = Ending::exit_code;
  } else {
    o.ending = o.result.empty() ? Ending::no_result : Ending::result;
  }
}

}  // namespace

ChildOutcome run_child_stoppable(const ChildSpec& spec, const std::atomic<bool>* stop,
                                 std::chrono::milliseconds stop_grace) {
  ChildOutcome o;
  o.started = std::chrono::system_clock::now();
  const auto t0 = Clock::now();
  auto finish = [&]() -> ChildOutcome {
    o.finished = std::chrono::system_clock::now();
    o.wall_ms = ms_between(t0, Clock::now());
    return o;
  };
  if (spec.argv.empty()) {
    o.spawn_error = "empty argv";
    o.spawn_errno = EINVAL;
    return finish();
  }
  if (spec.result_pipe && spec.result_fd <= 2) {
    o.spawn_error = "result_fd " + std::to_string(spec.result_fd) + " collides with stdin/stdout/stderr";
    o.spawn_errno = EINVAL;
    return finish();
  }

  Streams streams(spec.capture_limit, spec.result_limit);
  Fd out_w, err_w, result_w;
  if (!make_pipe(streams.out, out_w, o.spawn_error) ||
      !make_pipe(streams.err, err_w, o.spawn_error) ||
      (spec.result_pipe && !make_pipe(streams.result, result_w, o.spawn_error)))
    return finish();

  SpawnSetup setup;
  configure_attributes(setup);
  if (setup.actions_ready) {
    setup.check(posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0),
                "posix_spawn_file_actions_addopen(stdin, /dev/null)");
    setup.check(posix_spawn_file_actions_adddup2(&setup.actions, out_w.fd, 1), "posix_spawn_file_actions_adddup2(stdout)");
    setup.check(posix_spawn_file_actions_adddup2(&setup.actions, err_w.fd, 2), "posix_spawn_file_actions_adddup2(stderr)");
    if (spec.result_pipe)
      setup.check(posix_spawn_file_actions_adddup2(&setup.actions, result_w.fd, spec.result_fd),
                  "posix_spawn_file_actions_adddup2(result fd " + std::to_string(spec.result_fd) + ")");
  }
  if (!setup.ok()) {
    // Nothing was started; the caller sees a spawn failure that names the setup call.
    o.spawn_error = "starting " + spec.argv[0] + ": " + setup.error;
    o.spawn_errno = setup.error_code;
    spdlog::debug("child {}: {}", spec.label, o.spawn_error);
    return finish();
  }

  const EnvBlock env = child_environment(spec);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  prepare_process_tree();
  pid_t pid = 0;
  int rc = 0;
  TrackedChild tracked;
  {
    // Registered before any sweep can see it as a leftover of another child.
    std::lock_guard<std::mutex> lock(spawn_lock());
    rc = ::posix_spawn(&pid, argv[0], &setup.actions, &setup.attr, argv.data(), env.pointers());
    if (rc == 0) tracked.track(pid);
  }
  // Our copies of the write ends must go, or EOF never comes.
  out_w.reset();
  err_w.reset();
  result_w.reset();
  if (rc != 0) {
    o.spawn_error = spec.argv[0] + ": " + std::strerror(rc);
    o.spawn_errno = rc;
    spdlog::debug("child {}: spawn failed: {}", spec.label, o.spawn_error);
    return finish();
  }
  o.pid = pid;
  spdlog::debug("child {}: pid {} started", spec.label, pid);

  const auto deadline = t0 + spec.deadline;
  std::optional<Clock::time_point> stop_seen;
  std::optional<Clock::time_point> term_sent;
  std::optional<Clock::time_point> kill_sent;
  bool reaped = false;
  bool status_lost = false;
  int status = 0;
  std::optional<Clock::time_point> reaped_at;
  std::optional<Clock::time_point> hook_started;  // the deadline hook ran (the run timed out)

  const auto kill_group = [&](Clock::time_point now) {
    ::kill(-pid, SIGKILL);
    o.killed_after_grace = true;
    kill_sent = now;
    if (!term_sent) term_sent = now;
  };

  for (;;) {
    const auto now = Clock::now();
    if (!reaped) {
      const pid_t w = waitpid_nohang(pid, status);
      if (w == pid || (w < 0 && errno == ECHILD)) {
        // ECHILD: someone else reaped it (SIGCHLD ignored?); its status is lost.
        if (w < 0) {
          status_lost = true;
          spdlog::warn("child {}: pid {} was reaped elsewhere; exit status unknown", spec.label, pid);
        }
        reaped = true;
        reaped_at = now;
        tracked.release();
      }
    }
    if (reaped && !streams.open()) break;
    // A descendant may hold the pipes after the child exited: give it a moment (none
    // when we were ending the child anyway), then end everything it left.
    if (reaped && (term_sent || hook_started || now - *reaped_at > kPipeHolderWait)) break;
    if (!reaped) {
      if (stop && !stop_seen && stop->load()) stop_seen = now;
      const auto effective = stop_seen ? std::min(deadline, *stop_seen) : deadline;
      const auto grace = stop_seen ? std::min(spec.grace, stop_grace) : spec.grace;
      if (tracked.kill_requested() && !kill_sent) {
        kill_group(now);  // a second stop signal: no more grace
      } else if (!term_sent && now >= effective) {
        if (spec.at_deadline && !stop_seen && !hook_started) {
          hook_started = now;
          spec.at_deadline(pid);
        }
        const bool hook_waits = hook_started && !stop_seen && now < *hook_started + spec.deadline_hook_budget &&
                                spec.deadline_wait && spec.deadline_wait();
        if (!hook_waits) {
          ::kill(-pid, SIGTERM);
          term_sent = now;
        }
      } else if (term_sent && !kill_sent && now >= *term_sent + grace) {
        kill_group(now);
      } else if (kill_sent && now >= *kill_sent + kUnkillableWait) {
        // Still alive after SIGKILL: stuck in uninterruptible sleep, typically inside
        // the GPU driver. Give up on it rather than hang with it (it stays registered,
        // so no sweep takes it for another child's leftover).
        o.unkillable = true;
        tracked.abandon();
        spdlog::warn("child {}: pid {} survived SIGKILL for {} s; abandoned", spec.label, pid,
                     kUnkillableWait.count());
        break;
      }
    }
    // Short rounds: exit and deadlines are noticed within 20 ms.
    streams.pump(20);
  }

  // Whatever the child left alive: in its group, or moved to a group or session of its
  // own (reparented to us, the subreaper). Then the last bytes they wrote.
  if ((term_sent || hook_started) && !o.unkillable) ::kill(-pid, SIGKILL);  // what is left of the group we were ending
  sweep_leftovers(pid, !term_sent && !hook_started, o.strays, o.strays_unnamed, kLeftoverBudget);
  if (!o.strays.empty())
    spdlog::debug("child {}: pid {} left {} process(es) alive; killed", spec.label, pid,
                  o.strays.size() + o.strays_unnamed);
  for (const auto drain_end = Clock::now() + kFinalDrain; streams.open() && Clock::now() < drain_end;)
    streams.pump(20);

  o.out = streams.out_capture.finish();
  o.err = streams.err_capture.finish();
  o.result = std::move(streams.result_bytes);
  o.result_truncated = streams.result_truncated;
  if (o.unkillable || status_lost) {
    o.ending = term_sent || hook_started ? Ending::timeout : (o.result.empty() ? Ending::no_result : Ending::result);
  } else {
    decode_status(status, term_sent.has_value() || hook_started.has_value(), o);
  }
  spdlog::debug("child {}: pid {} ended: {}{}", spec.label, pid, to_string(o.ending),
                o.signal ? " (" + o.signal_name + ")" : "");
  return finish();
}

}  // namespace detail

ChildOutcome run_child(const ChildSpec& spec) {
  return detail::run_child_stoppable(spec, nullptr, std::chrono::milliseconds(0));
}

ChildOutcome run_child(const ChildSpec& spec, const std::atomic<bool>* stop, std::chrono::milliseconds stop_grace) {
  return detail::run_child_stoppable(spec, stop, stop_grace);
}

}  // namespace cudadiag::runner

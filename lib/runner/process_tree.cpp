// Leftover processes of a run: the subreaper, the registry of tracked children, the
// sweep that kills and reaps what a run left behind, and the async-signal-safe paths
// the stop escalation uses. Everything that reads /proc is written with plain system
// calls and fixed buffers (directories through util/dir_entries.h), so that the signal
// handler can share it.
#include "runner/process_tree.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "util/dir_entries.h"
#include "util/interrupt.h"

namespace cudadiag::runner::detail {
namespace {

constexpr int kSlots = 1024;
std::array<std::atomic<pid_t>, kSlots> g_slot_pid{};
std::array<std::atomic<bool>, kSlots> g_slot_kill{};

// ---- plain system calls and fixed buffers (async-signal-safe) ----

// Reads a small file whole (at most cap - 1 bytes); false when it cannot be opened.
bool read_small_file(const char* path, char* buf, std::size_t cap, std::size_t& n) noexcept {
  n = 0;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  while (n + 1 < cap) {
    const ssize_t got = ::read(fd, buf + n, cap - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += static_cast<std::size_t>(got);
  }
  ::close(fd);
  buf[n] = '\0';
  return true;
}

// Appends the decimal digits of v to p; returns the new end.
char* put_uint(char* p, unsigned long v) noexcept {
  char tmp[24];
  int k = 0;
  do {
    tmp[k++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (k) *p++ = tmp[--k];
  return p;
}

char* put_str(char* p, const char* s) noexcept {
  while (*s) *p++ = *s++;
  return p;
}

bool all_digits(const char* s) noexcept {
  if (!*s) return false;
  for (; *s; ++s)
    if (*s < '0' || *s > '9') return false;
  return true;
}

// Parses a signed decimal at text[i..] after skipping spaces; advances i.
bool take_int(const char* text, std::size_t n, std::size_t& i, long& out) noexcept {
  while (i < n && text[i] == ' ') ++i;
  bool neg = false;
  if (i < n && text[i] == '-') {
    neg = true;
    ++i;
  }
  if (i >= n || text[i] < '0' || text[i] > '9') return false;
  long v = 0;
  while (i < n && text[i] >= '0' && text[i] <= '9') v = v * 10 + (text[i++] - '0');
  out = neg ? -v : v;
  return true;
}

struct RawStat {
  pid_t pid = 0, ppid = 0, pgid = 0, sid = 0;
  char state = '?';
  char comm[64] = {};
};

bool parse_raw_stat(const char* text, std::size_t n, RawStat& out) noexcept {
  std::size_t i = 0;
  long v = 0;
  if (!take_int(text, n, i, v)) return false;
  out.pid = static_cast<pid_t>(v);
  std::size_t open = i;
  while (open < n && text[open] != '(') ++open;
  std::size_t close = n;
  while (close > open && text[close - 1] != ')') --close;
  if (open >= n || close <= open + 1) return false;
  --close;  // at the last ')'
  std::size_t len = close - open - 1;
  if (len >= sizeof out.comm) len = sizeof out.comm - 1;
  for (std::size_t k = 0; k < len; ++k) out.comm[k] = text[open + 1 + k];
  out.comm[len] = '\0';
  i = close + 1;
  while (i < n && text[i] == ' ') ++i;
  if (i >= n) return false;
  out.state = text[i++];
  long ppid = 0, pgid = 0, sid = 0;
  if (!take_int(text, n, i, ppid) || !take_int(text, n, i, pgid) || !take_int(text, n, i, sid)) return false;
  out.ppid = static_cast<pid_t>(ppid);
  out.pgid = static_cast<pid_t>(pgid);
  out.sid = static_cast<pid_t>(sid);
  return true;
}

bool read_raw_stat(pid_t pid, RawStat& out) noexcept {
  char path[64];
  char* p = put_str(path, "/proc/");
  p = put_uint(p, static_cast<unsigned long>(pid));
  p = put_str(p, "/stat");
  *p = '\0';
  char buf[1024];
  std::size_t n = 0;
  return read_small_file(path, buf, sizeof buf, n) && parse_raw_stat(buf, n, out);
}

// 1: /proc/<pid>/task/<tid>/children exists (CONFIG_PROC_CHILDREN); 0: it does not;
// -1: not yet known.
std::atomic<int> g_children_files{-1};

bool children_files_available() noexcept {
  int known = g_children_files.load();
  if (known < 0) {
    char path[64];
    char* p = put_str(path, "/proc/self/task/");
    p = put_uint(p, static_cast<unsigned long>(::getpid()));
    p = put_str(p, "/children");
    *p = '\0';
    known = ::access(path, R_OK) == 0 ? 1 : 0;
    g_children_files.store(known);
  }
  return known == 1;
}

// The pids whose parent is this process (any of its threads): from the threads'
// children files where the kernel has them, else from a walk of /proc.
std::size_t direct_children(pid_t* out, std::size_t cap) noexcept {
  std::size_t count = 0;
  const pid_t self = ::getpid();
  if (children_files_available()) {
    for_each_dir_entry("/proc/self/task", [&](const char* tid) {
      if (!all_digits(tid)) return;
      char path[96];
      char* p = put_str(path, "/proc/self/task/");
      p = put_str(p, tid);
      p = put_str(p, "/children");
      *p = '\0';
      char buf[16384];
      std::size_t n = 0;
      if (!read_small_file(path, buf, sizeof buf, n)) return;
      std::size_t i = 0;
      long v = 0;
      while (count < cap && take_int(buf, n, i, v)) out[count++] = static_cast<pid_t>(v);
    });
    return count;
  }
  for_each_dir_entry("/proc", [&](const char* name) {
    if (count >= cap || !all_digits(name)) return;
    pid_t pid = 0;
    for (const char* c = name; *c; ++c) pid = pid * 10 + (*c - '0');
    RawStat st;
    if (read_raw_stat(pid, st) && st.ppid == self) out[count++] = pid;
  });
  return count;
}

bool is_tracked(pid_t pid) noexcept {
  for (const auto& s : g_slot_pid)
    if (s.load() == pid) return true;
  return false;
}

void sleep_ms(long ms) noexcept {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

extern "C" void on_stop_escalation(int level) {
  if (level == 2) request_kill_all();
  if (level >= 3) kill_everything_now();
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  RawStat raw;
  if (!parse_raw_stat(text.data(), text.size(), raw)) return std::nullopt;
  return ProcStat{raw.pid, raw.ppid, raw.pgid, raw.sid, raw.state, raw.comm};
}

void prepare_process_tree() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
      spdlog::warn("cannot become a child subreaper ({}): descendants that leave a program's process group "
                   "may outlive its run",
                   std::strerror(errno));
    set_stop_escalation(&on_stop_escalation);
  });
}

std::mutex& spawn_lock() {
  static std::mutex mu;
  return mu;
}

void TrackedChild::track(pid_t pid) {
  release();
  for (int i = 0; i < kSlots; ++i) {
    pid_t expected = 0;
    if (g_slot_pid[i].compare_exchange_strong(expected, pid)) {
      g_slot_kill[i].store(false);  // a request left from the slot's previous child
      slot_ = i;
      return;
    }
  }
  spdlog::warn("pid {}: more than {} children at once; a second stop signal will not reach it", pid, kSlots);
}

bool TrackedChild::kill_requested() const { return slot_ >= 0 && g_slot_kill[slot_].load(); }

void TrackedChild::release() {
  if (slot_ >= 0) g_slot_pid[slot_].store(0);
  slot_ = -1;
}

std::size_t tracked_count() {
  std::size_t n = 0;
  for (const auto& s : g_slot_pid)
    if (s.load() != 0) ++n;
  return n;
}

void sweep_leftovers(pid_t run_pgid, bool name_group_members, std::vector<StrayProcess>& named,
                     std::size_t& unnamed, std::chrono::milliseconds budget, std::size_t max_named) {
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + budget;
  const pid_t own_pgid = ::getpgrp();
  const pid_t own_sid = ::getsid(0);
  std::vector<pid_t> pids(8192);
  std::set<pid_t> killed;
  for (;;) {
    bool pending = false;
    {
      std::lock_guard<std::mutex> lock(spawn_lock());
      const std::size_t n = direct_children(pids.data(), pids.size());
      // With no other child running, every leftover below us is this run's.
      const bool alone = tracked_count() == 0;
      for (std::size_t k = 0; k < n; ++k) {
        const pid_t pid = pids[k];
        if (is_tracked(pid)) continue;  // another thread waits on it
        RawStat st;
        if (!read_raw_stat(pid, st) || st.ppid != ::getpid()) continue;
        if (st.pgid == own_pgid) continue;  // not from a run: started by cudadiag itself
        if (st.state == 'Z') {
          // Dead and reparented to us: nobody else will ever wait for it.
          int status = 0;
          if (::waitpid(pid, &status, WNOHANG) == 0) pending = true;
          continue;
        }
        const bool ours = alone || st.pgid == run_pgid || killed.count(pid) != 0;
        if (!ours) continue;  // left to the sweep of the child it belongs to
        pending = true;
        if (killed.insert(pid).second && (name_group_members || st.pgid != run_pgid)) {
          if (named.size() < max_named) {
            StrayProcess s;
            s.pid = pid;
            s.command = st.comm;
            s.left_group = st.pgid != run_pgid;
            s.left_session = st.sid != own_sid;
            named.push_back(std::move(s));
          } else {
            ++unnamed;
          }
          spdlog::debug("pid {} ({}) left behind by the run of group {}: killed", pid, st.comm, run_pgid);
        }
        ::kill(pid, SIGKILL);
      }
    }
    if (!pending) return;
    if (Clock::now() >= end) {
      spdlog::warn("processes left by the run of group {} still alive {} ms after SIGKILL; abandoned", run_pgid,
                   budget.count());
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void request_kill_all() noexcept {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_pid[i].load() != 0) g_slot_kill[i].store(true);
}

void kill_everything_now() noexcept {
  for (const auto& s : g_slot_pid)
    if (const pid_t pid = s.load(); pid > 0) ::kill(-pid, SIGKILL);
  const pid_t own_pgid = ::getpgrp();
  static pid_t pids[8192];
  // Each round kills the leftovers hanging below us; their children come next.
  for (int round = 0; round < 150; ++round) {
    bool alive = false;
    const std::size_t n = direct_children(pids, sizeof pids / sizeof pids[0]);
    for (std::size_t k = 0; k < n; ++k) {
      RawStat st;
      if (!read_raw_stat(pids[k], st) || st.pgid == own_pgid || st.state == 'Z') continue;
      alive = true;
      ::kill(pids[k], SIGKILL);
    }
    if (!alive) return;
    sleep_ms(2);
  }
}

}  // namespace cudadiag::runner::detail

namespace cudadiag::runner {

std::string StrayProcess::note() const {
  const char* how = left_session ? "left the process group and session"
                    : left_group ? "left the process group"
                                 : "outlived the program in its process group";
  return std::string(how) + "; killed at the end of the run";
}

}  // namespace cudadiag::runner

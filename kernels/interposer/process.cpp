#include "kernels/interposer/process.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "kernels/interposer/debug_log.h"
#include "kernels/interposer/kernel_info.h"
#include "kernels/interposer/quarantine.h"
#include "kernels/interposer/real_dlsym.h"
#include "kernels/interposer/reuse_cache.h"
#include "kernels/interposer/tracked_ranges.h"

namespace cudadiag::interposer {
namespace {

constinit Settings g_settings;
pthread_once_t g_once = PTHREAD_ONCE_INIT;
// The file named by CUDADIAG_RING, attached at load (whether or not this process records).
constinit RingWriter g_main;
// This process's own "<file>.<pid>", when another process owns the main file.
constinit RingWriter g_own;
pthread_mutex_t g_recorder_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<RingWriter*> g_recorder{nullptr};
std::atomic<pid_t> g_recorder_pid{0};  // the process g_recorder was chosen in (fork changes it)
std::atomic<pid_t> g_cuda_seen_pid{0};
// This process's id, kept current by the fork handler (getpid is a system call, and hooks
// ask on every launch).
std::atomic<pid_t> g_pid{0};

pid_t current_pid() {
  const pid_t pid = g_pid.load(std::memory_order_relaxed);
  return pid != 0 ? pid : getpid();
}

RingSettings ring_settings(const Settings& s) {
  RingSettings r;
  r.fence_align = s.align;
  r.side = s.side;
  r.quarantine_limit_bytes = s.quarantine_bytes;
  return r;
}

void before_fork() {
  pthread_mutex_lock(&g_recorder_lock);
  lock_kernel_cache_for_fork();
  quarantine().lock_for_fork();
  kept_ranges().lock_for_fork();
  kept_memory().lock_for_fork();
  tracked_ranges().lock_for_fork();
  g_main.lock_all();
  g_own.lock_all();
}

void after_fork(bool child) {
  g_own.unlock_all();
  g_main.unlock_all();
  if (child) {
    tracked_ranges().reset_in_child();
  } else {
    tracked_ranges().unlock_in_parent();
  }
  kept_memory().unlock_after_fork();
  kept_ranges().unlock_after_fork();
  quarantine().unlock_after_fork();
  unlock_kernel_cache_after_fork();
  pthread_mutex_unlock(&g_recorder_lock);
}

void after_fork_in_parent() { after_fork(false); }
void after_fork_in_child() {
  g_pid.store(getpid(), std::memory_order_relaxed);
  after_fork(true);
}

void initialize() {
  g_pid.store(getpid(), std::memory_order_relaxed);
  g_settings = read_settings([](const char* name) -> const char* { return std::getenv(name); });
  enable_debug_log(g_settings.debug);
  real_dlsym();
  for (int i = 0; i < g_settings.rejected; ++i)
    debug_log("ignoring %s=%s (invalid value; the default applies)", g_settings.rejected_name[i],
              g_settings.rejected_value[i]);
  if (g_settings.ring_path) {
    const char* why = "";
    if (g_main.attach(g_settings.ring_path, g_settings.limits, ring_settings(g_settings), false, &why)) {
      g_main.add_process_loaded();
      debug_log("loaded; ring %s", g_settings.ring_path);
    } else {
      debug_log("loaded; not recording: %s: %s", g_settings.ring_path, why);
    }
  } else {
    debug_log("loaded; no CUDADIAG_RING: fencing without a record");
  }
  pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child);
}

// Caller holds g_recorder_lock.
RingWriter* choose_recorder(pid_t pid) {
  if (!g_main.attached()) return nullptr;
  if (g_main.claim(static_cast<std::int32_t>(pid))) {
    debug_log("recording into %s", g_settings.ring_path);
    return &g_main;
  }
  char path[4096];
  const int n = std::snprintf(path, sizeof path, "%s.%d", g_settings.ring_path, static_cast<int>(pid));
  if (n <= 0 || n >= static_cast<int>(sizeof path)) return nullptr;
  const char* why = "";
  if (!g_own.attach(path, g_settings.limits, ring_settings(g_settings), true, &why)) {
    debug_log("not recording: %s: %s", path, why);
    return nullptr;
  }
  g_own.claim(static_cast<std::int32_t>(pid));
  g_own.add_process_loaded();
  g_own.set_cuda_seen();
  g_main.add_other_cuda_process();
  debug_log("%s is recorded by process %d; recording into %s", g_settings.ring_path, g_main.header()->owner_pid,
            path);
  return &g_own;
}

}  // namespace

void ensure_initialized() noexcept { pthread_once(&g_once, &initialize); }

const Settings& settings() noexcept {
  ensure_initialized();
  return g_settings;
}

RingWriter* recorder() noexcept {
  const pid_t pid = current_pid();
  if (g_recorder_pid.load(std::memory_order_acquire) == pid) return g_recorder.load(std::memory_order_acquire);
  ensure_initialized();
  pthread_mutex_lock(&g_recorder_lock);
  if (g_recorder_pid.load(std::memory_order_relaxed) != pid) {
    g_recorder.store(choose_recorder(pid), std::memory_order_release);
    g_recorder_pid.store(pid, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_recorder_lock);
  return g_recorder.load(std::memory_order_acquire);
}

void note_cuda_seen() noexcept {
  const pid_t pid = current_pid();
  if (g_cuda_seen_pid.load(std::memory_order_relaxed) == pid) return;
  ensure_initialized();
  g_cuda_seen_pid.store(pid, std::memory_order_relaxed);
  g_main.set_cuda_seen();
}

}  // namespace cudadiag::interposer

// Runs when the library loads: settings and the ring file are in place before the
// program's first CUDA call.
__attribute__((constructor)) static void cudadiag_fence_on_load() { cudadiag::interposer::ensure_initialized(); }

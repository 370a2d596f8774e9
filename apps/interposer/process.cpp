#include "apps/interposer/process.h"

#include "apps/interposer/alloc_site.h"
#include "apps/interposer/slack_canary.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/guard_budget.h"
#include "apps/interposer/kernel_info.h"
#include "apps/interposer/mapped_libcuda.h"
#include "apps/interposer/quarantine.h"
#include "apps/interposer/recycle_bin.h"
#include "apps/interposer/real_dlsym.h"
#include "apps/interposer/reuse_cache.h"
#include "apps/interposer/tracked_ranges.h"
#include "fence/launcher_identity.h"

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
// What a new program of the run must keep (exec_env.h).
constinit SavedEnv g_saved_env;
char g_preload_path[4096];
// This image resolved a driver entry point through the interposer (kept across fork: a
// forked child shares the parent's libcuda and what it resolved).
std::atomic<bool> g_cuda_seen_image{false};
// A library loaded with RTLD_DEEPBIND (the first one's name kept).
std::atomic<bool> g_deepbind{false};
char g_deepbind_file[ring::kEventProgramBytes];
std::atomic<pid_t> g_image_end_recorded{0};
// Who this process is, read once at start (the launcher's rank, the executable): written
// into the ring it claims.
constinit fence::LauncherIdentity g_launcher;
char g_exe[4096];
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
  r.recycle_limit_bytes = s.recycle_bytes;
  r.guard_mode = s.guard;
  r.guard_limit_bytes = guard_budget().per_buffer();
  r.guard_total_limit_bytes = guard_budget().total();
  return r;
}

void before_fork() {
  pthread_mutex_lock(&g_recorder_lock);
  lock_allocation_sites_for_fork();
  quarantine().lock_for_fork();
  recycle_bin().lock_for_fork();
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
  recycle_bin().unlock_after_fork();
  quarantine().unlock_after_fork();
  unlock_allocation_sites_after_fork();
  pthread_mutex_unlock(&g_recorder_lock);
}

void after_fork_in_parent() { after_fork(false); }
void after_fork_in_child() {
  g_pid.store(getpid(), std::memory_order_relaxed);
  after_fork(true);
}

// The interposer's path as ld.so loaded it: its LD_PRELOAD entry, else what dladdr says.
void save_preload_path() {
  const char* preload = std::getenv("LD_PRELOAD");
  const char* p = preload;
  while (p && *p) {
    const std::size_t length = std::strcspn(p, " :");
    char entry[sizeof g_preload_path];
    if (length < sizeof entry) {
      std::memcpy(entry, p, length);
      entry[length] = '\0';
      if (preload_names_interposer(entry)) {
        std::memcpy(g_preload_path, entry, length + 1);
        g_saved_env.preload_path = g_preload_path;
        return;
      }
    }
    p += length;
    if (*p) ++p;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&save_preload_path), &info) && info.dli_fname &&
      std::strlen(info.dli_fname) < sizeof g_preload_path && std::strchr(info.dli_fname, '/')) {
    std::strcpy(g_preload_path, info.dli_fname);
    g_saved_env.preload_path = g_preload_path;
  }
}

// The CUDADIAG_* variables of the environment the process started with (the strings
// exec put on the stack stay where they are whatever the program does to environ).
void save_settings_env() {
  for (char** e = environ; e && *e && g_saved_env.count < kMaxSavedVars; ++e)
    if (std::strncmp(*e, "CUDADIAG_", 9) == 0 && std::strchr(*e, '=')) g_saved_env.vars[g_saved_env.count++] = *e;
}

void initialize() {
  g_pid.store(getpid(), std::memory_order_relaxed);
  save_preload_path();
  save_settings_env();
  g_settings = read_settings([](const char* name) -> const char* { return std::getenv(name); });
  g_launcher = fence::launcher_identity([](const char* name) -> const char* { return std::getenv(name); });
  const ssize_t exe = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
  g_exe[exe > 0 ? exe : 0] = '\0';
  enable_debug_log(g_settings.debug);
  real_dlsym();
  for (int i = 0; i < g_settings.rejected; ++i)
    debug_log("ignoring %s=%s (invalid value; the default applies)", g_settings.rejected_name[i],
              g_settings.rejected_value[i]);
  if (g_settings.ring_path) {
    const char* why = "";
    if (g_main.attach(g_settings.ring_path, g_settings.limits, ring_settings(g_settings), RingOpen::shared, &why)) {
      g_main.add_process_loaded();
      if (g_main.header()->ring_flags & ring::kRingNoRoom) {
        debug_log("loaded; ring %s: no room for its records (counting only)", g_settings.ring_path);
      } else {
        debug_log("loaded; ring %s", g_settings.ring_path);
      }
    } else {
      debug_log("loaded; not recording: %s: %s", g_settings.ring_path, why);
    }
  } else {
    debug_log("loaded; no CUDADIAG_RING: fencing without a record");
  }
  init_allocation_sites();
  pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child);
}

// Who records into `ring`: this process, as its launcher and /proc/self/exe name it.
void write_identity(RingWriter& ring, pid_t pid) {
  IdentityEvent e;
  e.pid = static_cast<std::int32_t>(pid);
  e.rank = g_launcher.rank;
  e.local_rank = g_launcher.local_rank;
  e.world_size = g_launcher.world_size;
  e.rank_from = g_launcher.rank_from;
  e.local_rank_from = g_launcher.local_rank_from;
  e.world_size_from = g_launcher.world_size_from;
  e.exe = g_exe;
  ring.set_identity(e);
}

// Caller holds g_recorder_lock.
RingWriter* choose_recorder(pid_t pid) {
  if (!g_main.attached()) return nullptr;
  if (g_main.claim(static_cast<std::int32_t>(pid))) {
    write_identity(g_main, pid);
    debug_log("recording into %s", g_settings.ring_path);
    return &g_main;
  }
  char path[4096];
  const int n = std::snprintf(path, sizeof path, "%s.%d", g_settings.ring_path, static_cast<int>(pid));
  if (n <= 0 || n >= static_cast<int>(sizeof path)) return nullptr;
  const char* why = "";
  if (!g_own.attach(path, g_settings.limits, ring_settings(g_settings), RingOpen::exclusive, &why)) {
    debug_log("not recording: %s: %s", path, why);
    return nullptr;
  }
  g_own.claim(static_cast<std::int32_t>(pid));
  write_identity(g_own, pid);
  g_own.add_process_loaded();
  g_own.set_cuda_seen();
  g_main.add_other_cuda_process();
  debug_log("%s is recorded by process %d; recording into %s", g_settings.ring_path, g_main.header()->owner_pid,
            path);
  return &g_own;
}

}  // namespace

void ensure_initialized() noexcept { pthread_once(&g_once, &initialize); }

const SavedEnv& saved_env() noexcept {
  ensure_initialized();
  return g_saved_env;
}

void record_event(ring::EventKind kind, std::int32_t pid, const char* program) noexcept {
  ensure_initialized();
  debug_log("process %d: %s: %s", static_cast<int>(pid), program ? program : "", ring::event_text(kind));
  g_main.add_event(kind, pid, program);
}

void note_deepbind_load(const char* file) noexcept {
  bool expected = false;
  if (!g_deepbind.compare_exchange_strong(expected, true)) return;
  std::strncpy(g_deepbind_file, file ? file : "(the program itself)", sizeof g_deepbind_file - 1);
  g_deepbind_file[sizeof g_deepbind_file - 1] = '\0';
}

void check_image_end() noexcept {
  // getpid, not the kept id: a vfork child (or posix_spawn's) runs no fork handler.
  const pid_t pid = getpid();
  if (g_image_end_recorded.load(std::memory_order_relaxed) == pid) return;
  // Async-signal-safe (an exec hook may call this between fork or vfork and exec): the
  // mappings are read from /proc, never through the loader.
  char libcuda[ring::kEventProgramBytes] = {};
  if (!find_mapped_libcuda(libcuda, sizeof libcuda)) return;
  if (g_deepbind.load()) {
    record_event(ring::EventKind::deepbind_cuda, pid, g_deepbind_file);
  } else if (!g_cuda_seen_image.load()) {
    record_event(ring::EventKind::cuda_unseen, pid, libcuda);
  } else {
    return;
  }
  // Not from a vfork child: its stores land in the parent's memory.
  if (pid == g_pid.load(std::memory_order_relaxed)) g_image_end_recorded.store(pid, std::memory_order_relaxed);
}

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
  g_cuda_seen_image.store(true, std::memory_order_relaxed);
  g_main.set_cuda_seen();
}

bool cuda_seen_here() noexcept { return g_cuda_seen_pid.load(std::memory_order_relaxed) == current_pid(); }

}  // namespace cudadiag::interposer

// Runs when the library loads: settings and the ring file are in place before the
// program's first CUDA call.
__attribute__((constructor)) static void cudadiag_fence_on_load() { cudadiag::interposer::ensure_initialized(); }

// Runs at exit: CUDA this image used without the interposer is recorded.
__attribute__((destructor)) static void cudadiag_fence_on_exit() {
  cudadiag::interposer::check_image_end();
  cudadiag::interposer::check_all_slack(cudadiag::ring::SlackCheck::exit);
}

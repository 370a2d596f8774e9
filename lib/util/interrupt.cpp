#include "util/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include "util/exit_codes.h"
#include "util/scratch_dir.h"

namespace cudadiag {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
std::atomic<StopEscalation> g_escalation{nullptr};

extern "C" void on_stop_signal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
  const int count = g_count.fetch_add(1) + 1;
  if (count < 2) return;
  if (const StopEscalation hook = g_escalation.load()) hook(count >= 3 ? 3 : 2);
  if (count >= 3) {
    // A third signal: out now, the children killed first, the scratch files removed.
    remove_scratch_dirs_now();
    ::_exit(kExitFindings);
  }
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // One handler at a time: a signal arriving during the escalation waits for it.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void set_stop_escalation(StopEscalation hook) { g_escalation.store(hook); }

const std::atomic<bool>& stop_flag() { return g_stop; }
bool stop_requested() { return g_stop.load(); }
int stop_signal() { return g_signal.load(); }

void request_stop(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
}

void clear_stop() {
  g_stop.store(false);
  g_signal.store(0);
  g_count.store(0);
}

}  // namespace cudadiag

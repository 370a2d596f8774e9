#include "util/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include "util/exit_codes.h"

namespace cudadiag {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};

extern "C" void on_stop_signal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
  if (g_count.fetch_add(1) >= 1) ::_exit(kExitFindings);  // a second signal: out now
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

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

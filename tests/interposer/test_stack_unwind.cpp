// The interposer's stack reader against glibc's backtrace: the same return addresses,
// through frames of the test, of libc (a qsort comparator), of another thread, and as
// deep as asked; a frame it does not read (a signal's) sends the caller to backtrace.
#include <catch2/catch.hpp>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "apps/interposer/stack_unwind.h"

using cudadiag::interposer::init_stack_unwind;
using cudadiag::interposer::unwind_stack;

namespace {

struct UnwoundStacks {
  std::vector<std::uint64_t> backtrace;
  std::vector<std::uint64_t> unwound;
  int unwound_count = 0;
};

// Both readers from one frame. Their first address differs (each returns into this
// function at its own call), the callers' must not.
__attribute__((noinline)) UnwoundStacks unwind_both(int max = 64) {
  static bool ready = false;
  if (!ready) {
    init_stack_unwind();
    ready = true;
  }
  UnwoundStacks s;
  void* raw[128];
  const int n = backtrace(raw, max);
  for (int i = 0; i < n; ++i) s.backtrace.push_back(reinterpret_cast<std::uint64_t>(raw[i]));
  std::uint64_t mine[128];
  s.unwound_count = unwind_stack(mine, max, 0);
  for (int i = 0; i < s.unwound_count; ++i) s.unwound.push_back(mine[i]);
  return s;
}

void unwind_same_callers(const UnwoundStacks& s) {
  REQUIRE(s.unwound_count == static_cast<int>(s.backtrace.size()));
  REQUIRE(s.backtrace.size() > 1);
  for (std::size_t i = 1; i < s.backtrace.size(); ++i) CHECK(s.unwound[i] == s.backtrace[i]);
}

volatile int g_unwind_sink = 0;

__attribute__((noinline)) UnwoundStacks unwind_nested(int depth, int max = 64) {
  if (depth == 0) return unwind_both(max);
  UnwoundStacks s = unwind_nested(depth - 1, max);
  g_unwind_sink = g_unwind_sink + 1;  // not a tail call
  return s;
}

UnwoundStacks g_unwind_in_compare;
int unwind_compare(const void* a, const void* b) {
  if (g_unwind_in_compare.backtrace.empty()) g_unwind_in_compare = unwind_nested(3);
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

void* unwind_on_thread(void* out) {
  *static_cast<UnwoundStacks*>(out) = unwind_nested(5);
  return nullptr;
}

UnwoundStacks g_unwind_in_handler;
void unwind_on_signal(int) { g_unwind_in_handler = unwind_both(); }

}  // namespace

#if defined(__x86_64__)

TEST_CASE("stack unwind: the return addresses backtrace gives, frame for frame", "[unwind]") {
  unwind_same_callers(unwind_nested(0));
  unwind_same_callers(unwind_nested(30));
}

TEST_CASE("stack unwind: through libc's own frames (a qsort comparator)", "[unwind]") {
  int values[] = {3, 1, 2};
  g_unwind_in_compare = UnwoundStacks{};
  std::qsort(values, 3, sizeof(int), &unwind_compare);
  unwind_same_callers(g_unwind_in_compare);
}

TEST_CASE("stack unwind: on a thread of its own, to the thread's first frame", "[unwind]") {
  UnwoundStacks s;
  pthread_t thread;
  REQUIRE(pthread_create(&thread, nullptr, &unwind_on_thread, &s) == 0);
  pthread_join(thread, nullptr);
  unwind_same_callers(s);
}

TEST_CASE("stack unwind: no more addresses than asked for", "[unwind]") {
  const UnwoundStacks s = unwind_nested(40, 12);
  CHECK(s.unwound_count == 12);
  unwind_same_callers(s);
}

TEST_CASE("stack unwind: a signal frame is left to backtrace", "[unwind]") {
  struct sigaction action {};
  struct sigaction old {};
  action.sa_handler = &unwind_on_signal;
  REQUIRE(sigaction(SIGUSR1, &action, &old) == 0);
  g_unwind_in_handler = UnwoundStacks{};
  raise(SIGUSR1);
  sigaction(SIGUSR1, &old, nullptr);
  CHECK(g_unwind_in_handler.unwound_count == -1);
  CHECK(g_unwind_in_handler.backtrace.size() > 3);  // backtrace reads on past the signal frame
}

#else

TEST_CASE("stack unwind: backtrace reads every stack off x86-64", "[unwind]") {
  CHECK(unwind_nested(3).unwound_count == -1);
}

#endif

// The deadline hook: what a run may do with its child still alive at the deadline (ask
// the GPU driver for a dump), before SIGTERM.
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>

#include "runner/runner.h"

using namespace cudadiag::runner;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

ChildSpec fake_sleep(const char* seconds) {
  ChildSpec s;
  s.argv = {FAKE_CHILD, "sleep", seconds};
  s.deadline = 200ms;
  s.grace = 500ms;
  return s;
}

}  // namespace

TEST_CASE("runner: the deadline hook runs once with the live child, and SIGTERM waits while it asks", "[runner]") {
  auto spec = fake_sleep("30");
  std::atomic<int> calls{0};
  pid_t seen = 0;
  bool alive_then = false;
  Clock::time_point hooked;
  spec.at_deadline = [&](pid_t pid) {
    ++calls;
    seen = pid;
    alive_then = ::kill(pid, 0) == 0;
    hooked = Clock::now();
  };
  spec.deadline_wait = [&] { return Clock::now() - hooked < 400ms; };
  spec.deadline_hook_budget = 5s;
  const auto o = run_child(spec);
  CHECK(calls == 1);
  CHECK(seen == o.pid);
  CHECK(alive_then);
  CHECK(o.ending == Ending::timeout);
  CHECK(o.signal_name == "SIGTERM");
  CHECK(o.wall_ms >= 550);  // 200 ms deadline + 400 ms of waiting
  CHECK(o.wall_ms < 3000);
}

TEST_CASE("runner: the hook's wait is bounded by its budget", "[runner]") {
  auto spec = fake_sleep("30");
  spec.at_deadline = [](pid_t) {};
  spec.deadline_wait = [] { return true; };  // never satisfied
  spec.deadline_hook_budget = 300ms;
  const auto o = run_child(spec);
  CHECK(o.ending == Ending::timeout);
  CHECK(o.wall_ms >= 450);
  CHECK(o.wall_ms < 3000);
}

TEST_CASE("runner: a child that dies while the hook waits (the driver aborts it) still timed out", "[runner]") {
  auto spec = fake_sleep("30");
  spec.at_deadline = [](pid_t pid) { ::kill(pid, SIGABRT); };
  spec.deadline_wait = [] { return true; };
  spec.deadline_hook_budget = 5s;
  const auto o = run_child(spec);
  CHECK(o.ending == Ending::timeout);
  CHECK(o.signal_name == "SIGABRT");
  CHECK(o.wall_ms < 3000);
}

TEST_CASE("runner: no hook on a child that ends before its deadline", "[runner]") {
  ChildSpec spec;
  spec.argv = {FAKE_CHILD, "exit", "3"};
  spec.deadline = 5s;
  bool called = false;
  spec.at_deadline = [&](pid_t) { called = true; };
  spec.deadline_hook_budget = 1s;
  const auto o = run_child(spec);
  CHECK_FALSE(called);
  CHECK(o.ending == Ending::exit_code);
}

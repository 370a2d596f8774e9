// Every child ending decoded, bounded capture, environment, and the Pool, driven
// through the fake_child helper.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <thread>

#include "runner/bounded_capture.h"
#include "runner/environment.h"
#include "runner/process_tree.h"
#include "runner/runner.h"
#include "util/interrupt.h"

using namespace cudadiag::runner;
using namespace std::chrono_literals;

namespace {

ChildSpec fake(std::vector<std::string> args) {
  ChildSpec s;
  s.argv = {FAKE_CHILD};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.deadline = 5000ms;
  s.grace = 500ms;
  return s;
}

}  // namespace

TEST_CASE("runner: exit code is decoded", "[runner]") {
  auto o = run_child(fake({"exit", "7"}));
  CHECK(o.ending == Ending::exit_code);
  CHECK(o.exit_code == 7);
  CHECK_FALSE(o.signal.has_value());
  CHECK(o.pid > 0);
  CHECK(std::string(to_string(o.ending)) == "exit");
}

TEST_CASE("runner: exit 0 without a result is no_result", "[runner]") {
  auto o = run_child(fake({"exit", "0"}));
  CHECK(o.ending == Ending::no_result);
  CHECK(o.exit_code == 0);
}

TEST_CASE("runner: SIGSEGV and abort are named", "[runner]") {
  auto segv = run_child(fake({"segv"}));
  CHECK(segv.ending == Ending::signal);
  CHECK(segv.signal == SIGSEGV);
  CHECK(segv.signal_name == "SIGSEGV");
  auto ab = run_child(fake({"abort"}));
  CHECK(ab.ending == Ending::signal);
  CHECK(ab.signal_name == "SIGABRT");
}

TEST_CASE("runner: signal names", "[runner]") {
  CHECK(signal_name(SIGBUS) == "SIGBUS");
  CHECK(signal_name(SIGKILL) == "SIGKILL");
  CHECK(signal_name(40) == "SIG40");
}

TEST_CASE("runner: deadline with SIGTERM honoured", "[runner]") {
  auto spec = fake({"sleep", "30"});
  spec.deadline = 200ms;
  auto o = run_child(spec);
  CHECK(o.ending == Ending::timeout);
  CHECK_FALSE(o.killed_after_grace);
  CHECK(o.signal_name == "SIGTERM");
  CHECK(o.wall_ms < 2000);
}

TEST_CASE("runner: deadline needing SIGKILL", "[runner]") {
  auto spec = fake({"ignore-term", "30"});
  spec.deadline = 200ms;
  spec.grace = 300ms;
  auto o = run_child(spec);
  CHECK(o.ending == Ending::timeout);
  CHECK(o.killed_after_grace);
  CHECK(o.signal_name == "SIGKILL");
  CHECK(o.wall_ms >= 450);
  CHECK(o.wall_ms < 3000);
}

TEST_CASE("runner: an 8 MiB flood is drained and bounded", "[runner]") {
  auto spec = fake({"flood", std::to_string(8 << 20)});
  spec.capture_limit = 4096;
  auto o = run_child(spec);
  CHECK(o.ending == Ending::no_result);
  CHECK(o.out.total_bytes >= (8u << 20) - 1024);
  CHECK(o.out.head.size() == 2048);
  CHECK(o.out.tail.size() == 2048);
  CHECK(o.out.dropped_bytes == o.out.total_bytes - 4096);
  CHECK(o.out.head.rfind("HEAD-MARKER\n", 0) == 0);
  CHECK(o.out.tail.size() >= 12);
  CHECK(o.out.tail.substr(o.out.tail.size() - 12) == "TAIL-MARKER\n");
  const std::string text = o.out.text();
  CHECK(text.find("bytes dropped") != std::string::npos);
  CHECK(text.size() < 4200);
  CHECK(o.err.text() == "flood starts\nflood ends\n");
  CHECK(o.err.dropped_bytes == 0);
}

TEST_CASE("runner: bounded capture keeps head and the latest tail", "[runner]") {
  BoundedCapture c(8);  // head 4, tail 4
  c.append("abc", 3);
  c.append("defgh", 5);
  c.append("ij", 2);
  c.append("k", 1);
  auto cap = c.finish();
  CHECK(cap.head == "abcd");
  CHECK(cap.tail == "hijk");
  CHECK(cap.total_bytes == 11);
  CHECK(cap.dropped_bytes == 3);
  CHECK(cap.text() == "abcd\n[... 3 bytes dropped ...]\nhijk");
  BoundedCapture small(8);
  small.append("xyz", 3);
  CHECK(small.finish().text() == "xyz");
}

TEST_CASE("runner: result received on the result fd", "[runner]") {
  auto o = run_child(fake({"result", "{\"hello\":1}"}));
  CHECK(o.ending == Ending::result);
  CHECK(o.result == "{\"hello\":1}");
  CHECK_FALSE(o.result_truncated);
  auto spec = fake({"result", "0123456789"});
  spec.result_limit = 4;
  auto t = run_child(spec);
  CHECK(t.result == "0123");
  CHECK(t.result_truncated);
}

TEST_CASE("runner: environment set and unset reach the child", "[runner]") {
  ::setenv("CUDADIAG_TEST_INHERITED", "parent", 1);
  auto inherited = run_child(fake({"env", "CUDADIAG_TEST_INHERITED"}));
  CHECK(inherited.result == "parent");

  auto spec = fake({"env", "CUDADIAG_TEST_INHERITED"});
  spec.env_unset = {"CUDADIAG_TEST_INHERITED"};
  CHECK(run_child(spec).result == "<unset>");

  spec = fake({"env", "CUDADIAG_TEST_SET"});
  spec.env_set = {{"CUDADIAG_TEST_SET", "value with spaces"}};
  CHECK(run_child(spec).result == "value with spaces");

  spec = fake({"env", "CUDADIAG_RESULT_FD"});
  spec.result_fd = 5;
  CHECK(run_child(spec).result == "5");
  ::unsetenv("CUDADIAG_TEST_INHERITED");
}

TEST_CASE("runner: a child without a result pipe sees no fd and no variable", "[runner]") {
  // An fd 3 this test process may have inherited must not stand in for the pipe.
  if (const int flags = ::fcntl(3, F_GETFD); flags != -1) ::fcntl(3, F_SETFD, flags | FD_CLOEXEC);
  ::setenv("CUDADIAG_RESULT_FD", "3", 1);  // as if cudadiag ran inside another cudadiag child
  auto with = run_child(fake({"fd-open", "3"}));
  CHECK(with.out.text() == "fd 3 open; CUDADIAG_RESULT_FD=3\n");

  auto spec = fake({"fd-open", "3"});
  spec.result_pipe = false;
  const auto without = run_child(spec);
  CHECK(without.out.text() == "fd 3 closed; CUDADIAG_RESULT_FD=<unset>\n");
  CHECK(without.ending == Ending::no_result);
  CHECK(without.exit_code == 0);
  CHECK(without.result.empty());
  ::unsetenv("CUDADIAG_RESULT_FD");

  // The block: the inherited variable is removed, none is added.
  const char* parent[] = {"A=1", "CUDADIAG_RESULT_FD=9", nullptr};
  ChildSpec bare;
  bare.result_pipe = false;
  CHECK(child_environment(bare, const_cast<char* const*>(parent)).entries() == std::vector<std::string>{"A=1"});
}

TEST_CASE("runner: environment block", "[runner]") {
  const char* parent[] = {"A=1", "B=2", "CUDADIAG_RESULT_FD=9", "C=3", nullptr};
  ChildSpec spec;
  spec.env_unset = {"B"};
  spec.env_set = {{"C", "30"}, {"D", "4"}};
  auto env = child_environment(spec, const_cast<char* const*>(parent));
  CHECK(env.entries() == std::vector<std::string>{"A=1", "C=30", "D=4", "CUDADIAG_RESULT_FD=3"});
  CHECK(env.pointers()[4] == nullptr);
}

TEST_CASE("runner: a missing executable is spawn_failed", "[runner]") {
  ChildSpec spec;
  spec.argv = {"/nonexistent/cudadiag-child"};
  auto o = run_child(spec);
  CHECK(o.ending == Ending::spawn_failed);
  CHECK(o.spawn_error.find("No such file") != std::string::npos);
  ChildSpec empty;
  CHECK(run_child(empty).ending == Ending::spawn_failed);
}

TEST_CASE("pool: jobs=4 runs 8 sleepers in parallel", "[pool]") {
  Pool pool(PoolOptions{4, nullptr, 3000ms});
  for (int i = 0; i < 8; ++i) CHECK(pool.submit(fake({"sleep", "0.3"})) == static_cast<size_t>(i));
  std::vector<size_t> done;
  const auto t0 = std::chrono::steady_clock::now();
  pool.run([&](size_t id, const ChildOutcome& o) {
    CHECK(o.ending == Ending::no_result);
    done.push_back(id);
  });
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  CHECK(done.size() == 8);
  CHECK(elapsed < 1800ms);  // serial would be 2.4 s; two waves of 0.3 s expected
  CHECK(pool.not_started().empty());
}

TEST_CASE("pool: on_done can submit more", "[pool]") {
  Pool pool(PoolOptions{2, nullptr, 3000ms});
  pool.submit(fake({"exit", "3"}));
  std::vector<int> codes;
  pool.run([&](size_t, const ChildOutcome& o) {
    codes.push_back(o.exit_code.value_or(-1));
    if (o.exit_code.value_or(0) > 0)
      pool.submit(fake({"exit", std::to_string(*o.exit_code - 1)}));
  });
  CHECK(codes == std::vector<int>{3, 2, 1, 0});
}

TEST_CASE("pool: stop prevents new starts and terminates running children", "[pool]") {
  std::atomic<bool> stop{false};
  Pool pool(PoolOptions{2, &stop, 200ms});
  for (int i = 0; i < 6; ++i) pool.submit(fake({"sleep", "30"}));
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop = true;
  });
  std::vector<size_t> done;
  const auto t0 = std::chrono::steady_clock::now();
  pool.run([&](size_t id, const ChildOutcome& o) {
    CHECK(o.ending == Ending::timeout);
    done.push_back(id);
  });
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  std::sort(done.begin(), done.end());
  CHECK(done == std::vector<size_t>{0, 1});
  CHECK(pool.not_started() == std::vector<size_t>{2, 3, 4, 5});
}

TEST_CASE("runner: a child reaped elsewhere (SIGCHLD ignored) does not hang us", "[runner]") {
  auto previous = std::signal(SIGCHLD, SIG_IGN);
  auto o = run_child(fake({"result", "still here"}));
  std::signal(SIGCHLD, previous);
  CHECK(o.ending == Ending::result);
  CHECK(o.result == "still here");
  CHECK(o.wall_ms < 3000);
}

TEST_CASE("runner: a spawn setup call that fails names itself", "[runner]") {
  cudadiag::runner::ChildSpec spec;
  spec.argv = {FAKE_CHILD, "exit", "0"};
  spec.result_fd = 1 << 30;  // beyond any fd limit: posix_spawn_file_actions_adddup2 refuses it
  const auto o = cudadiag::runner::run_child(spec);
  CHECK(o.ending == cudadiag::runner::Ending::spawn_failed);
  CHECK(o.pid == 0);
  CHECK_THAT(o.spawn_error, Catch::Contains("posix_spawn_file_actions_adddup2(result fd") && Catch::Contains(FAKE_CHILD));
  CHECK(o.spawn_errno == EBADF);
}

namespace {

// The pid after "grandchild " in a child's stdout (fake_child escape*), 0 when none.
pid_t grandchild_of(const ChildOutcome& o) {
  const std::string text = o.out.text();
  const auto at = text.find("grandchild ");
  return at == std::string::npos ? 0 : static_cast<pid_t>(std::atoi(text.c_str() + at + 11));
}

// Gone for good: no such process (killed and reaped; a zombie would still answer).
bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

TEST_CASE("process tree: /proc/<pid>/stat lines are parsed up to the last ')'", "[runner]") {
  const auto st = cudadiag::runner::detail::parse_proc_stat("4242 (my (odd) prog) S 17 4242 4000 0 -1 4194560 1 2");
  REQUIRE(st);
  CHECK(st->pid == 4242);
  CHECK(st->comm == "my (odd) prog");
  CHECK(st->state == 'S');
  CHECK(st->ppid == 17);
  CHECK(st->pgid == 4242);
  CHECK(st->sid == 4000);
  CHECK_FALSE(cudadiag::runner::detail::parse_proc_stat("4242 (unterminated S 1 2 3"));
  CHECK_FALSE(cudadiag::runner::detail::parse_proc_stat(""));
}

TEST_CASE("runner: a descendant that moved to its own session ends with the deadline and is named", "[runner]") {
  auto spec = fake({"escape", "30"});
  spec.deadline = 500ms;
  spec.grace = 300ms;
  const auto o = run_child(spec);
  CHECK(o.ending == Ending::timeout);
  const pid_t grandchild = grandchild_of(o);
  REQUIRE(grandchild > 0);
  CHECK(gone(grandchild));
  REQUIRE(o.strays.size() == 1);
  CHECK(o.strays[0].pid == grandchild);
  CHECK(o.strays[0].command == "fake_child");
  CHECK(o.strays[0].left_group);
  CHECK(o.strays[0].left_session);
  CHECK(o.strays[0].note() == "left the process group and session; killed at the end of the run");
  CHECK(o.wall_ms < 3000);
}

TEST_CASE("runner: what a child leaves behind when it exits is killed, reaped and named", "[runner]") {
  const auto o = run_child(fake({"escape-exit", "30"}));
  CHECK(o.ending == Ending::no_result);
  CHECK(o.exit_code == 0);
  const pid_t grandchild = grandchild_of(o);
  REQUIRE(grandchild > 0);
  CHECK(gone(grandchild));
  REQUIRE(o.strays.size() == 1);
  CHECK(o.strays[0].pid == grandchild);
  CHECK(o.strays[0].left_session);
  // A child that leaves nothing names nothing.
  CHECK(run_child(fake({"exit", "0"})).strays.empty());
}

TEST_CASE("pool: sweeping leftovers never takes another child's exit status", "[pool]") {
  Pool pool(PoolOptions{4, nullptr, 300ms});
  std::map<size_t, int> expected;
  for (int i = 0; i < 12; ++i) {
    if (i % 3 == 0) {
      pool.submit(fake({"escape-exit", "30"}));
      expected[static_cast<size_t>(i)] = 0;
    } else {
      pool.submit(fake({"exit", std::to_string(10 + i)}));
      expected[static_cast<size_t>(i)] = 10 + i;
    }
  }
  std::vector<pid_t> grandchildren;
  std::map<size_t, int> got;
  pool.run([&](size_t id, const ChildOutcome& o) {
    got[id] = o.exit_code.value_or(-1);
    if (const pid_t g = grandchild_of(o)) grandchildren.push_back(g);
  });
  CHECK(got == expected);
  CHECK(grandchildren.size() == 4);
  for (const pid_t g : grandchildren) CHECK(gone(g));
}

TEST_CASE("runner: an interrupted child that ignores SIGTERM is killed after the stop grace", "[runner]") {
  std::atomic<bool> stop{false};
  auto spec = fake({"ignore-term", "30"});
  spec.deadline = 60s;
  spec.grace = 5s;  // the deadline's grace: an interruption does not wait for it
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop = true;
  });
  const auto o = run_child(spec, &stop, 300ms);
  stopper.join();
  CHECK(o.ending == Ending::timeout);
  CHECK(o.killed_after_grace);
  CHECK(o.signal_name == "SIGKILL");
  CHECK(o.wall_ms >= 550);   // 300 ms running, 300 ms grace after SIGTERM
  CHECK(o.wall_ms < 1300);  // not the deadline's 5 s grace
}

TEST_CASE("runner: a second stop signal kills the child's tree at once; the caller still reaps it", "[runner]") {
  cudadiag::clear_stop();
  cudadiag::install_stop_handlers();
  auto spec = fake({"escape-ignore-term", "30"});
  spec.deadline = 60s;
  spec.grace = 10s;
  std::thread interrupter([] {
    std::this_thread::sleep_for(300ms);
    ::raise(SIGINT);  // asks to stop: SIGTERM, which the child ignores
    std::this_thread::sleep_for(200ms);
    ::raise(SIGINT);  // no more grace
  });
  const auto o = run_child(spec, &cudadiag::stop_flag(), 10s);
  interrupter.join();
  CHECK(cudadiag::stop_requested());
  cudadiag::clear_stop();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
  CHECK(o.ending == Ending::timeout);
  CHECK(o.killed_after_grace);
  CHECK(o.wall_ms < 1500);  // not the 10 s stop grace
  CHECK(gone(o.pid));
  const pid_t grandchild = grandchild_of(o);
  REQUIRE(grandchild > 0);
  CHECK(gone(grandchild));
  REQUIRE(o.strays.size() == 1);
  CHECK(o.strays[0].pid == grandchild);
}

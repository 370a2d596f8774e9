#include <catch2/catch.hpp>

#include <fstream>

#include "host/xid.h"
#include "suite/xid_attach.h"

using namespace cudadiag;

namespace {
report::Result with_child(const std::string& outcome, int pid) {
  report::Result r;
  r.case_id = "c" + std::to_string(pid);
  r.outcome = *report::parse_outcome(outcome);
  r.child = report::ChildInfo{};
  r.child->pid = pid;
  return r;
}
std::string read_host_data(const std::string& name) {
  std::ifstream in(std::string(CUDADIAG_TEST_DATA) + "/host/" + name);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("xid: lines naming a failed child's pid are attached to it", "[xid]") {
  // Recorded on an H200: Xid 43 for pid 464, Xid 31 (MMU fault) for pid 470, ...
  const auto events = host::parse_xid_text(read_host_data("real_h200_kmsg.txt"));
  REQUIRE(events.size() >= 3);
  std::vector<report::Result> results = {with_child("cuda_error", 470), with_child("ok", 464),
                                         with_child("crashed", 999999)};
  // window: the whole recorded log
  const size_t n = suite::attach_xid(results, events, {0, 0, ~0ULL / 4}, {});
  CHECK(n == 1);
  REQUIRE(results[0].xid.size() == 1);
  CHECK(results[0].xid[0].xid == 31);
  CHECK(results[0].xid[0].pid == 470);
  CHECK(results[1].xid.empty());  // pid 464 has an Xid, but its case passed
  CHECK(results[2].xid.empty());  // no line names pid 999999
}

TEST_CASE("xid: a line without a pid is attributed by time window", "[xid]") {
  host::XidEvent e;
  e.xid = 79;
  e.timestamp_us = 50'000'000;
  e.message = "GPU has fallen off the bus.";
  std::vector<report::Result> in_window = {with_child("crashed", 4242)};
  CHECK(suite::attach_xid(in_window, {e}, {0, 49'000'000, 51'000'000}, {}) == 1);
  CHECK(in_window[0].xid[0].xid == 79);

  std::vector<report::Result> long_before = {with_child("crashed", 4242)};
  CHECK(suite::attach_xid(long_before, {e}, {0, 10'000'000, 11'000'000}, {}) == 0);
  CHECK(long_before[0].xid.empty());
}

namespace {
std::vector<host::XidEvent> repro_run_events() {
  std::ifstream in(std::string(CUDADIAG_TEST_DATA) + "/suite/real_h200_repro_xid_kmsg.txt");
  REQUIRE(in.good());
  return host::parse_xid_text(std::string(std::istreambuf_iterator<char>(in), {}));
}
size_t count_pid(const std::vector<report::XidLine>& xid, int pid) {
  size_t n = 0;
  for (const auto& x : xid)
    if (x.pid == pid) ++n;
  return n;
}
}  // namespace

TEST_CASE("xid: parallel children of a repro run each get only the lines naming their pid", "[xid]") {
  // From an H200 run: the trap child (3124) and the checked-index child (3172) faulted;
  // 3164 is named by Xid 13 lines too; 3170 ran beside them and logged nothing.
  const auto events = repro_run_events();
  REQUIRE(events.size() == 61);
  std::vector<report::Result> results = {with_child("cuda_error", 3124), with_child("cuda_error", 3172),
                                         with_child("mismatch", 3164), with_child("cuda_error", 3170)};
  // The children overlapped (10.0 s .. 11.5 s), as with -j 8.
  const suite::ChildWindow all{0, 10'000'000, 11'500'000};
  std::vector<suite::ChildWindow> others = {{3124, 10'000'000, 10'200'000}, {3172, 11'200'000, 11'400'000},
                                            {3164, 10'800'000, 11'000'000}, {3170, 10'050'000, 11'450'000}};
  for (auto& r : results) {
    std::vector<report::Result> one = {r};
    std::vector<suite::ChildWindow> rest;
    for (const auto& o : others)
      if (o.pid != r.child->pid) rest.push_back(o);
    suite::attach_xid(one, events, all, rest);
    r = one[0];
  }
  CHECK(results[0].xid.size() == 13);  // 12 Xid 13 lines and the Xid 43 of the trap
  CHECK(count_pid(results[0].xid, 3124) == 13);
  CHECK(results[1].xid.size() == 9);
  CHECK(count_pid(results[1].xid, 3172) == 9);
  // Lines naming the pid stay with it even though the case ended without a CUDA error.
  CHECK(results[2].xid.size() == 24);
  CHECK(count_pid(results[2].xid, 3164) == 24);
  // The pid-less Misaligned Address lines of the log (at 20.5 s) are outside every window.
  CHECK(results[3].xid.empty());
}

TEST_CASE("xid: pid-less lines go to a failed child only when no other child was running", "[xid]") {
  const auto all = repro_run_events();
  std::vector<host::XidEvent> pidless;
  for (const auto& e : all)
    if (!e.pid) pidless.push_back(e);
  REQUIRE(pidless.size() == 15);  // Misaligned Address lines logged at 20.5 s without a pid
  const suite::ChildWindow mine{0, 20'300'000, 20'450'000};

  SECTION("alone: the failed child gets them") {
    std::vector<report::Result> r = {with_child("cuda_error", 5001)};
    CHECK(suite::attach_xid(r, pidless, mine, {{5000, 1'000'000, 2'000'000}}) == 1);
    CHECK(r[0].xid.size() == 15);
  }
  SECTION("another child ran at that time: nobody gets them") {
    std::vector<report::Result> r = {with_child("cuda_error", 5001)};
    CHECK(suite::attach_xid(r, pidless, mine, {{5002, 20'400'000, 20'600'000}}) == 0);
    CHECK(r[0].xid.empty());
  }
  SECTION("another child still running (no end yet): nobody gets them") {
    std::vector<report::Result> r = {with_child("cuda_error", 5001)};
    CHECK(suite::attach_xid(r, pidless, mine, {{5002, 19'000'000, 0}}) == 0);
  }
  SECTION("a child that ended without a CUDA error gets none, even alone") {
    std::vector<report::Result> r = {with_child("mismatch", 5001)};
    CHECK(suite::attach_xid(r, pidless, mine, {}) == 0);
    CHECK(r[0].xid.empty());
  }
  SECTION("a line after the window's slack is not the child's") {
    std::vector<report::Result> r = {with_child("cuda_error", 5001)};
    CHECK(suite::attach_xid(r, pidless, {0, 10'000'000, 10'100'000}, {}) == 0);
  }
}

TEST_CASE("xid: failed outcomes", "[xid]") {
  for (const char* o : {"cuda_error", "crashed", "timeout", "no_result", "mismatch"}) CHECK(report::is_failure(*report::parse_outcome(o)));
  for (const char* o : {"ok", "skipped", "host_valid", "invalid_config"}) CHECK_FALSE(report::is_failure(*report::parse_outcome(o)));
}

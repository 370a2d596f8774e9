#include <catch2/catch.hpp>

#include <fstream>

#include "host/xid.h"
#include "suite/xid_attach.h"

using namespace cudadiag;

namespace {
report::Result with_child(const std::string& outcome, int pid) {
  report::Result r;
  r.case_id = "c" + std::to_string(pid);
  r.outcome = outcome;
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
  const size_t n = suite::attach_xid(results, events, 0, ~0ULL / 4);
  CHECK(n == 1);
  REQUIRE(results[0].xid.size() == 1);
  CHECK(results[0].xid[0]["xid"] == 31);
  CHECK(results[0].xid[0]["pid"] == 470);
  CHECK(results[1].xid.empty());  // pid 464 has an Xid, but its case passed
  CHECK(results[2].xid.empty());  // no line names pid 999999
}

TEST_CASE("xid: a line without a pid is attributed by time window", "[xid]") {
  host::XidEvent e;
  e.xid = 79;
  e.timestamp_us = 50'000'000;
  e.message = "GPU has fallen off the bus.";
  std::vector<report::Result> in_window = {with_child("crashed", 4242)};
  CHECK(suite::attach_xid(in_window, {e}, 49'000'000, 51'000'000) == 1);
  CHECK(in_window[0].xid[0]["xid"] == 79);

  std::vector<report::Result> long_before = {with_child("crashed", 4242)};
  CHECK(suite::attach_xid(long_before, {e}, 10'000'000, 11'000'000) == 0);
  CHECK(long_before[0].xid.empty());
}

TEST_CASE("xid: failed outcomes", "[xid]") {
  report::Result r;
  for (const char* o : {"cuda_error", "crashed", "timeout", "no_result", "mismatch"}) {
    r.outcome = o;
    CHECK(suite::is_failed_outcome(r));
  }
  for (const char* o : {"ok", "skipped", "host_valid", "invalid_config"}) {
    r.outcome = o;
    CHECK_FALSE(suite::is_failed_outcome(r));
  }
}

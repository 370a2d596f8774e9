// Kernel-log lines tied to a child by one policy: repro's children and run's runs get
// the same lines from the same log.
#include <catch2/catch.hpp>

#include "evidence/kernel_log.h"
#include "run/run_session.h"
#include "suite/xid_attach.h"

using namespace cudadiag;

namespace {

host::XidEvent line(std::uint64_t seq, std::uint64_t us, const std::string& text) {
  auto e = host::parse_xid_line("4," + std::to_string(seq) + "," + std::to_string(us) + ",c;" + text);
  REQUIRE(e);
  return *e;
}

std::vector<host::XidEvent> log_of_one_child() {
  return {
      line(10, 5'000'000, "NVRM: Xid (PCI:0000:00:06): 31, pid=111, name=python3, channel 0x0000000a, intr 00000000. "
                          "MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_8 faulted @ 0x8026_6be00000. Fault is of "
                          "type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"),
      line(11, 5'000'100, "NVRM: Xid (PCI:0000:00:06): 13, Graphics SM Warp Exception on (GPC 1, TPC 4, SM 0): "
                          "Misaligned Address"),
      line(12, 5'000'200, "NVRM: Xid (PCI:0000:00:06): 43, pid=999, name=other, channel 0x0000000a"),
      // 1.5 s after the child ended: past the slack.
      line(13, 7'500'000, "NVRM: Xid (PCI:0000:00:06): 13, Graphics Exception: late"),
  };
}

std::vector<std::uint64_t> seqs(const std::vector<host::XidEvent>& events) {
  std::vector<std::uint64_t> out;
  for (const auto& e : events) out.push_back(e.seq.value_or(0));
  return out;
}

}  // namespace

TEST_CASE("repro and run tie the same kernel-log lines to a failing child", "[evidence]") {
  const auto events = log_of_one_child();
  report::Result failed;
  failed.outcome = report::Outcome::cuda_error;
  failed.child = report::ChildInfo{};
  failed.child->pid = 111;
  std::vector<report::Result> results{failed};
  REQUIRE(suite::attach_xid(results, events, suite::ChildWindow{111, 4'000'000, 6'000'000}, {}) == 1);
  const auto in_run = run::xid_lines_of_run(events, {111}, 4'000'000, 6'000'000, /*failed=*/true);
  REQUIRE(results[0].xid.size() == in_run.size());
  for (std::size_t i = 0; i < in_run.size(); ++i) CHECK(results[0].xid[i].message == in_run[i].message);
  CHECK(seqs(in_run) == std::vector<std::uint64_t>{10, 11});  // not 999's, not the late one
}

TEST_CASE("a pid-less line goes to no child while another child ran", "[evidence]") {
  const auto events = log_of_one_child();
  const evidence::ChildWindow mine{111, 4'000'000, 6'000'000};
  CHECK(seqs(evidence::xid_lines_of_child(events, {111}, mine, {{222, 4'900'000, 5'100'000}}, true)) ==
        std::vector<std::uint64_t>{10});
  CHECK(seqs(evidence::xid_lines_of_child(events, {111}, mine, {}, false)) == std::vector<std::uint64_t>{10});
  // The run's own slack was 2 s: the late line was its; one policy now, half a second.
  CHECK(seqs(evidence::xid_lines_of_child(events, {111}, mine, {}, true, 2'000'000)) ==
        std::vector<std::uint64_t>{10, 11, 13});
}

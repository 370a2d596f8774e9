#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "host/xid.h"

using namespace cudadiag::host;

namespace {

std::string data_path(const std::string& name) { return std::string(CUDADIAG_TEST_DATA) + "/host/" + name; }

std::string read_data(const std::string& name) {
  std::ifstream in(data_path(name));
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("kmsg Xid 13 with pid, name and GPC/TPC/SM text") {
  const auto e = parse_xid_line(
      "4,1004,7100500123,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python3, Graphics SM "
      "Warp Exception on (GPC 2, TPC 1, SM 0): Out Of Range Address");
  REQUIRE(e);
  CHECK(e->seq == 1004u);
  CHECK(e->timestamp_us == 7100500123u);
  CHECK(e->pci == "0000:3b:00");
  CHECK(e->xid == 13);
  CHECK(e->pid == 4242);
  CHECK(e->process_name == "python3");
  CHECK(e->message == "Graphics SM Warp Exception on (GPC 2, TPC 1, SM 0): Out Of Range Address");
  CHECK(e->raw.rfind("NVRM: Xid (PCI:0000:3b:00): 13", 0) == 0);
}

TEST_CASE("old-driver lines without pid and name") {
  const auto e = parse_xid_line("[ 9000.000000] NVRM: Xid (PCI:0000:d8:00): 79, GPU has fallen off the bus.");
  REQUIRE(e);
  CHECK(e->timestamp_us == 9'000'000'000u);
  CHECK_FALSE(e->seq);
  CHECK(e->xid == 79);
  CHECK_FALSE(e->pid);
  CHECK(e->process_name.empty());
  CHECK(e->message == "GPU has fallen off the bus.");
  CHECK(xid_meaning(79).points_to == "hardware");
}

TEST_CASE("Xid 43 with a short fractional timestamp and no name") {
  const auto e = parse_xid_line("[ 7100.6] NVRM: Xid (PCI:0000:3b:00): 43, pid=4242, Ch 00000010");
  REQUIRE(e);
  CHECK(e->timestamp_us == 7'100'600'000u);
  CHECK(e->xid == 43);
  CHECK(e->pid == 4242);
  CHECK(e->process_name.empty());
  CHECK(e->message == "Ch 00000010");
}

TEST_CASE("pid='<unknown>' is no pid") {
  const auto e = parse_xid_line(
      "4,1009,8000000000,-;NVRM: Xid (PCI:0000:af:00): 48, pid='<unknown>', name=<unknown>, An "
      "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, "
      "subpartition 0.");
  REQUIRE(e);
  CHECK(e->xid == 48);
  CHECK_FALSE(e->pid);
  CHECK(e->process_name.empty());
  CHECK(e->message.rfind("An uncorrectable double bit error", 0) == 0);
  CHECK(xid_meaning(48).points_to == "hardware");
}

TEST_CASE("syslog lines without a kernel timestamp still parse") {
  const auto e = parse_xid_line(
      "Nov 21 20:15:03 gpu-node-7 kernel: NVRM: Xid (PCI:0000:86:00): 31, pid=5151, name=cudadiag, Ch "
      "00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3c_1f600000.");
  REQUIRE(e);
  CHECK_FALSE(e->timestamp_us);
  CHECK(e->xid == 31);
  CHECK(e->pid == 5151);
  CHECK(e->message.find("MMU Fault") != std::string::npos);
}

TEST_CASE("non-Xid lines and malformed Xid lines are rejected") {
  CHECK_FALSE(parse_xid_line("6,1001,5001000000,-;usb 1-1: new high-speed USB device number 2"));
  CHECK_FALSE(parse_xid_line("[ 9500.000000] NVRM: GPU at PCI:0000:3b:00: GPU-3a8f0e5c"));
  CHECK_FALSE(parse_xid_line("[ 9600.000000] NVRM: Xid (PCI:0000:3b:00): not-a-number, garbage"));
  CHECK_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:3b:00"));
  CHECK_FALSE(parse_xid_line(""));
  CHECK_FALSE(parse_xid_line(" SUBSYSTEM=pci"));
}

TEST_CASE("recorded kmsg sample: every Xid, in order, noise skipped") {
  const auto events = parse_xid_text(read_data("kmsg_sample.txt"));
  REQUIRE(events.size() == 8);
  CHECK(events[0].xid == 13);
  CHECK(events[2].xid == 43);
  CHECK(events[3].xid == 31);
  CHECK(events[3].pci == "0000:86:00");
  CHECK(events[4].xid == 48);
  CHECK(events[5].xid == 63);
  CHECK(events[6].xid == 79);
  CHECK(events[6].process_name == "torchrun");
  CHECK(events[7].xid == 13);
  CHECK_FALSE(events[7].pid);
  CHECK(events[7].message == "Graphics SM Global Exception on (GPC 0, TPC 3, SM 1): Multiple Warp Errors");
}

TEST_CASE("recorded dmesg sample") {
  const auto events = parse_xid_text(read_data("dmesg_sample.txt"));
  REQUIRE(events.size() == 4);
  CHECK(events[0].xid == 13);
  CHECK(events[1].xid == 43);
  CHECK(events[2].xid == 79);
  CHECK(events[3].xid == 31);
}

TEST_CASE("real H200 kmsg and dmesg captures parse to the same events") {
  const auto k = parse_xid_text(read_data("real_h200_kmsg.txt"));
  const auto d = parse_xid_text(read_data("real_h200_dmesg.txt"));
  REQUIRE(k.size() == 7);
  REQUIRE(d.size() == k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    INFO(i);
    CHECK(k[i].xid == d[i].xid);
    CHECK(k[i].pid == d[i].pid);
    CHECK(k[i].timestamp_us == d[i].timestamp_us);
    CHECK(k[i].message == d[i].message);
  }
  CHECK(k[0].xid == 43);
  CHECK(k[0].pid == 464);
  CHECK(k[0].process_name == "probe");
  CHECK(k[0].message == "channel 0x0000000a");
  CHECK(k[1].xid == 31);
  CHECK(k[1].message.find("ACCESS_TYPE_VIRT_WRITE") != std::string::npos);
  CHECK(k[1].seq == 361u);
}

TEST_CASE("cursor: only records after it are returned") {
  KernelLogCursor c;
  c.readable = true;
  c.path = data_path("kmsg_sample.txt");
  c.last_seq = 1006;  // after the two Xid 13 and the Xid 43
  const auto events = new_xid_lines_since(c);
  REQUIRE(events.size() == 5);
  CHECK(events.front().xid == 31);
  CHECK(events.front().seq == 1007u);

  const auto whole = kernel_log_cursor(data_path("kmsg_sample.txt"));
  CHECK(whole.readable);
  CHECK(whole.last_seq == 1013u);
  CHECK(new_xid_lines_since(whole).empty());
}

TEST_CASE("an unreadable log gives a reason and no events, never an exception") {
  const auto c = kernel_log_cursor(data_path("no_such_file.txt"));
  CHECK_FALSE(c.readable);
  CHECK(c.reason.find("no_such_file.txt") != std::string::npos);
  CHECK(new_xid_lines_since(c).empty());
}

TEST_CASE("attribute_to_pid: by pid, else by time window") {
  const auto events = parse_xid_text(read_data("kmsg_sample.txt"));
  const auto mine = attribute_to_pid(events, 4242, 7'100'000'000, 7'100'400'000, 500'000);
  REQUIRE(mine.size() == 3);  // two Xid 13 and Xid 43 of pid 4242
  for (const auto& e : mine) CHECK(e.pid == 4242);

  // No pid on the line: attributed when inside the window (9'100'000'000 us).
  const auto by_time = attribute_to_pid(events, 1, 9'099'000'000, 9'099'500'000, 600'000);
  REQUIRE(by_time.size() == 1);
  CHECK(by_time[0].xid == 13);
  CHECK_FALSE(by_time[0].pid);
  CHECK(attribute_to_pid(events, 1, 9'099'000'000, 9'099'500'000, 100'000).empty());

  // Another process's Xid is never attributed, even inside the window.
  CHECK(attribute_to_pid(events, 9999, 7'100'000'000, 7'101'000'000, 0).empty());
}

TEST_CASE("Xid JSON carries meaning and nulls for missing parts") {
  const auto e = parse_xid_line("[ 9000.000000] NVRM: Xid (PCI:0000:d8:00): 79, GPU has fallen off the bus.");
  REQUIRE(e);
  const auto j = to_json(*e);
  CHECK(j["xid"] == 79);
  CHECK(j["pid"].is_null());
  CHECK(j["process"].is_null());
  CHECK(j["timestamp_us"] == 9'000'000'000ULL);
  CHECK(j["points_to"] == "hardware");
  CHECK(xid_meaning(31).points_to == "application");
  CHECK(xid_meaning(12345).points_to == "unknown");
}

TEST_CASE("monotonic conversion of wall-clock instants") {
  const auto now_mono = monotonic_now_us();
  const auto one_sec_ago = to_monotonic_us(std::chrono::system_clock::now() - std::chrono::seconds(1));
  CHECK(one_sec_ago <= now_mono);
  CHECK(now_mono - one_sec_ago >= 900'000);
  CHECK(now_mono - one_sec_ago <= 1'500'000);
}

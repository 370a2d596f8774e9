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
  CHECK(xid_meaning(79).points_to == cudadiag::report::XidPointsTo::hardware);
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
  CHECK(xid_meaning(48).points_to == cudadiag::report::XidPointsTo::hardware);
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
  CHECK(xid_meaning(31).points_to == cudadiag::report::XidPointsTo::application);
  CHECK(xid_meaning(12345).points_to == cudadiag::report::XidPointsTo::unknown);
}

TEST_CASE("monotonic conversion of wall-clock instants") {
  const auto now_mono = monotonic_now_us();
  const auto one_sec_ago = to_monotonic_us(std::chrono::system_clock::now() - std::chrono::seconds(1));
  CHECK(one_sec_ago <= now_mono);
  CHECK(now_mono - one_sec_ago >= 900'000);
  CHECK(now_mono - one_sec_ago <= 1'500'000);
}

TEST_CASE("Xid 31: MMU fault details from the real H200 capture") {
  const auto k = parse_xid_text(read_data("real_h200_kmsg.txt"));
  REQUIRE(k.size() == 7);
  REQUIRE(k[1].xid == 31);
  REQUIRE(k[1].mmu_fault);
  const auto& f = *k[1].mmu_fault;
  CHECK(f.address == 0u);  // "faulted @ 0x0_00000000": a write through a null pointer
  CHECK(f.engine == "GRAPHICS");
  CHECK(f.client == "GPC1 GPCCLIENT_T1_4");
  CHECK(f.fault_type == "FAULT_PDE");
  CHECK(f.access_type == "ACCESS_TYPE_VIRT_WRITE");
  CHECK(f.access == MmuAccess::write);
  CHECK(std::string(to_string(f.access)) == "write");
  // Xid 43 lines carry no MMU fault.
  CHECK_FALSE(k[0].mmu_fault);
}

TEST_CASE("Xid 31: the split address loses its underscore") {
  const auto events = parse_xid_text(read_data("kmsg_sample.txt"));
  REQUIRE(events[3].xid == 31);
  REQUIRE(events[3].mmu_fault);
  CHECK(events[3].mmu_fault->address == 0x7f3c1f600000ULL);
  CHECK(events[3].mmu_fault->engine == "GRAPHICS");
  CHECK(events[3].mmu_fault->client == "GPCCLIENT_T1_0");
  CHECK(events[3].mmu_fault->access == MmuAccess::read);
  CHECK(events[3].mmu_fault->address % kMmuFaultGranularity == 0);
}

TEST_CASE("Xid 31: other engines, fault and access types") {
  auto f = parse_mmu_fault(
      "Ch 00000010, intr 00000000. MMU Fault: ENGINE CE3 HUBCLIENT_CE1 faulted @ 0x7f32_30a00000. "
      "Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_ATOMIC_STRONG");
  REQUIRE(f);
  CHECK(f->address == 0x7f3230a00000ULL);
  CHECK(f->engine == "CE3");
  CHECK(f->client == "HUBCLIENT_CE1");
  CHECK(f->fault_type == "FAULT_PTE");
  CHECK(f->access == MmuAccess::atomic);

  f = parse_mmu_fault("MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_PE_0 faulted @ 0x1_00000000. "
                      "Fault is of type FAULT_RO_VIOLATION ACCESS_TYPE_VIRT_PREFETCH");
  REQUIRE(f);
  CHECK(f->address == 0x100000000ULL);
  CHECK(f->fault_type == "FAULT_RO_VIOLATION");
  CHECK(f->access == MmuAccess::prefetch);

  // No "Fault is of type" sentence: the address still counts, the types stay empty.
  f = parse_mmu_fault("MMU Fault: ENGINE HOST0 HOSTCLIENT_HOST faulted @ 0xdead_beef000");
  REQUIRE(f);
  CHECK(f->address == 0xdeadbeef000ULL);
  CHECK(f->fault_type.empty());
  CHECK(f->access == MmuAccess::unknown);

  // An access type outside the sentence is still found.
  f = parse_mmu_fault("faulted @ 0x2000. ACCESS_TYPE_READ,");
  REQUIRE(f);
  CHECK(f->access_type == "ACCESS_TYPE_READ");
  CHECK(f->access == MmuAccess::read);
  CHECK(f->engine.empty());
}

TEST_CASE("Xid 31: messages without a usable address give nothing") {
  // Armed GPU core dumps: the trap handler takes the fault and the line carries no
  // address of the program (H100, driver 580.159.04, the dump proved 0x7f278be00800).
  CHECK_FALSE(parse_mmu_fault("channel 0x0000000a, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 UNRECOGNIZED_CLIENT "
                              "faulted @ 0x1867ff_004cb738. Fault is of type UNRECOGNIZED_FAULT "
                              "UNRECOGNIZED_ACCESS_TYPE"));
  CHECK_FALSE(parse_mmu_fault(""));
  CHECK_FALSE(parse_mmu_fault("MMU Fault: ENGINE GRAPHICS faulted @ "));
  CHECK_FALSE(parse_mmu_fault("MMU Fault: ENGINE GRAPHICS faulted @ 0x"));
  CHECK_FALSE(parse_mmu_fault("MMU Fault: ENGINE GRAPHICS faulted @ 0xzz"));
  CHECK_FALSE(parse_mmu_fault("faulted @ 0x1_0000_0000_0000_0000"));  // 17 hex digits: overflow
  CHECK_FALSE(parse_mmu_fault("faulted 0x7f3c_1f600000"));
  // A non-31 Xid with the same words is not decoded.
  const auto e = parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 13, pid=1, faulted @ 0x1000");
  REQUIRE(e);
  CHECK_FALSE(e->mmu_fault);
}

TEST_CASE("Xid parsing survives hostile text") {
  // Binary junk around a real line, invalid UTF-8, NULs.
  std::string junk;
  for (int i = 0; i < 20000; ++i) junk += static_cast<char>((i * 73 + 11) & 0xFF);
  const std::string real =
      "NVRM: Xid (PCI:0000:86:00): 31, pid=77, name=x, MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 "
      "faulted @ 0x7f3c_1f600000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ";
  const auto events = parse_xid_text(junk + "\n" + real + "\n" + junk);
  bool found = false;
  for (const auto& e : events)
    if (e.pid == 77 && e.mmu_fault && e.mmu_fault->address == 0x7f3c1f600000ULL) found = true;
  CHECK(found);

  // A 4 MiB line of one repeated marker-like word: bounded work, no crash.
  std::string huge;
  huge.reserve(4u << 20);
  while (huge.size() < (4u << 20)) huge += "faulted @ 0x_ MMU Fault: ENGINE ";
  CHECK_FALSE(parse_mmu_fault(huge));
  std::string huge_xid = "NVRM: Xid (PCI:0000:86:00): 31, " + huge;
  const auto e = parse_xid_line(huge_xid);
  REQUIRE(e);
  CHECK_FALSE(e->mmu_fault);
  // Underscores only, and a very long run of hex digits.
  CHECK_FALSE(parse_mmu_fault("faulted @ 0x" + std::string(1000, '_')));
  CHECK_FALSE(parse_mmu_fault("faulted @ 0x" + std::string(100000, 'f')));
}

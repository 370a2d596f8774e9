#pragma once
// NVIDIA Xid events from the kernel log. The driver reports GPU faults as lines like
//   NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python3, Graphics SM Warp Exception ...
// An Xid 13/31/43 attributed to a child's pid confirms that the child's kernel faulted
// on the GPU; Xid 48/63/64/74/79/94/95 point at the machine, not the code.
//
// The reader uses /dev/kmsg (records "prio,seq,usec,flags;text"); the parser also
// accepts `dmesg` lines ("[  123.456789] text") and syslog lines without a timestamp.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace cudadiag::host {

// How a faulting access touched memory, from the access type of an Xid 31 line.
enum class MmuAccess { read, write, atomic, prefetch, unknown };
const char* to_string(MmuAccess a);

// The details of an Xid 31 "MMU Fault" message:
//   ... MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_4 faulted @ 0x7f32_30a00000.
//   Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE
// The driver prints the address as two hex halves joined by '_' and reports it with the
// low 12 bits cleared: it names the faulting 4 KiB page, not the byte.
struct MmuFault {
  std::uint64_t address = 0;  // start of the faulting page
  std::string engine;         // "GRAPHICS", "CE3", ...
  std::string client;         // what follows the engine: "GPC1 GPCCLIENT_T1_4"
  std::string fault_type;     // "FAULT_PDE", "FAULT_PTE", ... ("" when absent)
  std::string access_type;    // "ACCESS_TYPE_VIRT_WRITE", ... ("" when absent)
  MmuAccess access = MmuAccess::unknown;
};
inline constexpr std::uint64_t kMmuFaultGranularity = 4096;

// nullopt when the message has no "faulted @ 0x..." address, or one that is no address
// of the program (the UNRECOGNIZED_CLIENT / UNRECOGNIZED_FAULT form written while GPU
// core dumps are armed); every other field is optional. Never throws; bounded work on
// any input.
std::optional<MmuFault> parse_mmu_fault(std::string_view message);

struct XidEvent {
  std::optional<std::uint64_t> timestamp_us;  // CLOCK_MONOTONIC (since boot), when the line has one
  std::optional<std::uint64_t> seq;           // /dev/kmsg sequence number
  std::string pci;                            // "0000:3b:00"
  int xid = 0;
  std::optional<int> pid;                     // absent in old drivers and for '<unknown>'
  std::string process_name;                   // "" when absent
  std::string message;                        // text after "xid, [pid=..., name=..., ]"
  std::string raw;                            // the NVRM text as logged
  std::optional<MmuFault> mmu_fault;          // Xid 31 with a parsable "MMU Fault" message
};

// Parses one kernel-log line (kmsg record, dmesg line or bare text). nullopt for any
// line that is not an NVRM Xid report.
std::optional<XidEvent> parse_xid_line(std::string_view line);

// Parses many lines (e.g. a whole `dmesg` dump); non-Xid lines are skipped.
std::vector<XidEvent> parse_xid_text(std::string_view text);

// What an Xid number usually means, and who is usually at fault.
struct XidMeaning {
  std::string_view summary;
  report::XidPointsTo points_to = report::XidPointsTo::unknown;
};
XidMeaning xid_meaning(int xid);

// Where in the kernel log "now" is, so that later reads return only newer lines.
struct KernelLogCursor {
  bool readable = false;
  std::string path;                       // the log read (default /dev/kmsg)
  std::string reason;                     // why it is not readable
  std::optional<std::uint64_t> last_seq;  // last record seen; nullopt: log was empty
  std::uint64_t taken_at_us = 0;          // CLOCK_MONOTONIC when the cursor was taken
};

// Reads the log to its end (non-blocking) and remembers the last record.
KernelLogCursor kernel_log_cursor(const std::string& path = "/dev/kmsg");

// Xid events logged after the cursor (all of them when the cursor had no record).
// Returns an empty list when the log cannot be read; never throws.
std::vector<XidEvent> new_xid_lines_since(const KernelLogCursor& cursor);

// Events that belong to a child: the same pid, or (when the line names no pid) logged
// between start_us and end_us, widened by slack_us because the driver reports a fault
// a little after the kernel ran. Times are CLOCK_MONOTONIC microseconds.
std::vector<XidEvent> attribute_to_pid(const std::vector<XidEvent>& events, int pid,
                                       std::uint64_t start_us, std::uint64_t end_us,
                                       std::uint64_t slack_us = 2'000'000);

// CLOCK_MONOTONIC now, and a wall-clock instant converted to it (for ChildOutcome times).
std::uint64_t monotonic_now_us();
std::uint64_t to_monotonic_us(std::chrono::system_clock::time_point t);

// {timestamp_us, pci, xid, pid, process, message, meaning, points_to}
// The report's Xid line for an event (with what its number usually means).
report::XidLine to_xid_line(const XidEvent& e);
std::vector<report::XidLine> to_xid_lines(const std::vector<XidEvent>& events);
report::json to_json(const XidEvent& e);
report::json to_json(const std::vector<XidEvent>& events);

}  // namespace cudadiag::host

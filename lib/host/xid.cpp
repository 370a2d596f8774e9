#include "host/xid.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include "util/trim.h"

namespace cudadiag::host {
namespace {

constexpr std::string_view kXidMarker = "NVRM: Xid (";

bool consume(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

void skip_spaces(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}


// Reads an unsigned decimal; false when there is no digit.
bool take_uint(std::string_view& s, std::uint64_t& out) {
  size_t i = 0;
  std::uint64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 19) v = v * 10 + static_cast<std::uint64_t>(s[i++] - '0');
  if (i == 0) return false;
  s.remove_prefix(i);
  out = v;
  return true;
}

// "6,1234,5678901,-;" (kmsg) -> seq and usec; the line is advanced past the ';'.
bool take_kmsg_prefix(std::string_view& s, std::uint64_t& seq, std::uint64_t& usec) {
  std::string_view t = s;
  std::uint64_t prio = 0;
  if (!take_uint(t, prio) || !consume(t, ",")) return false;
  if (!take_uint(t, seq) || !consume(t, ",")) return false;
  if (!take_uint(t, usec) || !consume(t, ",")) return false;
  const auto semi = t.find(';');
  if (semi == std::string_view::npos) return false;
  t.remove_prefix(semi + 1);
  s = t;
  return true;
}

// "[  123.456789] " (dmesg) -> microseconds; the line is advanced past the ']'.
bool take_dmesg_prefix(std::string_view& s, std::uint64_t& usec) {
  std::string_view t = s;
  if (!consume(t, "[")) return false;
  skip_spaces(t);
  std::uint64_t sec = 0;
  if (!take_uint(t, sec) || !consume(t, ".")) return false;
  std::uint64_t frac = 0;
  size_t digits = 0;
  while (!t.empty() && t.front() >= '0' && t.front() <= '9') {
    if (digits < 6) frac = frac * 10 + static_cast<std::uint64_t>(t.front() - '0');
    ++digits;
    t.remove_prefix(1);
  }
  for (; digits < 6; ++digits) frac *= 10;
  if (!consume(t, "]")) return false;
  skip_spaces(t);
  usec = sec * 1'000'000 + frac;
  s = t;
  return true;
}

// Leading "pid=1234, " and "name=python3, " fields of newer drivers.
void take_pid_and_name(std::string_view& rest, XidEvent& e) {
  for (int field = 0; field < 2; ++field) {
    skip_spaces(rest);
    const bool is_pid = rest.substr(0, 4) == "pid=";
    const bool is_name = rest.substr(0, 5) == "name=";
    if (!is_pid && !is_name) return;
    rest.remove_prefix(is_pid ? 4 : 5);
    const auto comma = rest.find(',');
    std::string_view value = util::trim_blanks(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (is_pid) {
      std::string_view digits = value;
      std::uint64_t pid = 0;
      if (take_uint(digits, pid) && digits.empty() && pid <= 0x7fffffff) e.pid = static_cast<int>(pid);
    } else if (value != "<unknown>") {
      e.process_name = std::string(value);
    }
  }
}

// The next space-separated word, without trailing '.', ',' or ';'.
std::string_view next_word(std::string_view& s) {
  skip_spaces(s);
  std::size_t n = 0;
  while (n < s.size() && s[n] != ' ' && s[n] != '\t') ++n;
  std::string_view w = s.substr(0, n);
  s.remove_prefix(n);
  while (!w.empty() && (w.back() == '.' || w.back() == ',' || w.back() == ';')) w.remove_suffix(1);
  return w;
}

// "0x7f3c_1f600000" -> value; the halves may be joined by '_'. At most 16 hex digits.
std::optional<std::uint64_t> take_split_hex(std::string_view s) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  std::uint64_t v = 0;
  int digits = 0;
  for (std::size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else if (c == '_') continue;
    else break;
    if (++digits > 16) return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  if (digits == 0) return std::nullopt;
  return v;
}

MmuAccess access_of(std::string_view access_type) {
  if (access_type.find("ATOMIC") != std::string_view::npos) return MmuAccess::atomic;
  if (access_type.find("PREFETCH") != std::string_view::npos) return MmuAccess::prefetch;
  if (access_type.find("WRITE") != std::string_view::npos) return MmuAccess::write;
  if (access_type.find("READ") != std::string_view::npos) return MmuAccess::read;
  return MmuAccess::unknown;
}

}  // namespace

std::optional<XidEvent> parse_xid_line(std::string_view line) {
  XidEvent e;
  std::uint64_t seq = 0, usec = 0;
  if (take_kmsg_prefix(line, seq, usec)) {
    e.seq = seq;
    e.timestamp_us = usec;
  } else if (take_dmesg_prefix(line, usec)) {
    e.timestamp_us = usec;
  }
  const auto at = line.find(kXidMarker);
  if (at == std::string_view::npos) return std::nullopt;
  e.raw = std::string(util::trim_blanks(line.substr(at)));
  std::string_view rest = line.substr(at + kXidMarker.size());
  const auto close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view pci = rest.substr(0, close);
  consume(pci, "PCI:");
  e.pci = std::string(util::trim_blanks(pci));
  rest.remove_prefix(close + 1);
  if (!consume(rest, ":")) return std::nullopt;
  skip_spaces(rest);
  std::uint64_t xid = 0;
  if (!take_uint(rest, xid) || xid > 100000) return std::nullopt;
  e.xid = static_cast<int>(xid);
  consume(rest, ",");
  take_pid_and_name(rest, e);
  e.message = std::string(util::trim_blanks(rest));
  if (e.xid == 31) e.mmu_fault = parse_mmu_fault(e.message);
  return e;
}

const char* to_string(MmuAccess a) {
  switch (a) {
    case MmuAccess::read: return "read";
    case MmuAccess::write: return "write";
    case MmuAccess::atomic: return "atomic";
    case MmuAccess::prefetch: return "prefetch";
    case MmuAccess::unknown: break;
  }
  return "unknown";
}

std::optional<MmuFault> parse_mmu_fault(std::string_view message) {
  constexpr std::string_view kFaulted = "faulted @ ";
  const auto at = message.find(kFaulted);
  if (at == std::string_view::npos) return std::nullopt;
  // With GPU core dumps armed the fault is taken by the debugger's trap handler and the
  // line reads "GPC1 UNRECOGNIZED_CLIENT faulted @ 0x1867ff_004cb738. Fault is of type
  // UNRECOGNIZED_FAULT UNRECOGNIZED_ACCESS_TYPE" (H100, driver 580.159.04): the number is
  // no virtual address of the program (the dump proved 0x7f278be00800 for that fault).
  if (message.find("UNRECOGNIZED_CLIENT") != std::string_view::npos ||
      message.find("UNRECOGNIZED_FAULT") != std::string_view::npos)
    return std::nullopt;
  std::string_view rest = message.substr(at + kFaulted.size());
  skip_spaces(rest);
  const auto address = take_split_hex(rest);
  if (!address) return std::nullopt;
  MmuFault f;
  f.address = *address;

  // "MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_4 faulted @ ..."
  constexpr std::string_view kMmu = "MMU Fault:";
  const auto mmu = message.substr(0, at).rfind(kMmu);
  if (mmu != std::string_view::npos) {
    std::string_view who = message.substr(mmu + kMmu.size(), at - mmu - kMmu.size());
    std::string_view w = next_word(who);
    if (w == "ENGINE") {
      f.engine = std::string(next_word(who));
      w = next_word(who);
    }
    for (; !w.empty(); w = next_word(who)) {
      if (!f.client.empty()) f.client += ' ';
      f.client += w;
    }
  }

  // "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"
  constexpr std::string_view kType = "Fault is of type ";
  std::string_view tail = message.substr(at);
  if (const auto t = tail.find(kType); t != std::string_view::npos) {
    std::string_view types = tail.substr(t + kType.size());
    const std::string_view fault_type = next_word(types);
    if (fault_type.substr(0, 6) == "FAULT_") f.fault_type = std::string(fault_type);
    const std::string_view access = next_word(types);
    if (access.substr(0, 12) == "ACCESS_TYPE_") f.access_type = std::string(access);
  }
  if (f.access_type.empty()) {
    if (const auto a = tail.find("ACCESS_TYPE_"); a != std::string_view::npos) {
      std::string_view from = tail.substr(a);
      f.access_type = std::string(next_word(from));
    }
  }
  f.access = access_of(f.access_type);
  return f;
}

std::vector<XidEvent> parse_xid_text(std::string_view text) {
  std::vector<XidEvent> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    if (auto e = parse_xid_line(line)) out.push_back(std::move(*e));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

XidMeaning xid_meaning(int xid) {
  switch (xid) {
    case 13: return {"graphics engine exception: a kernel faulted (illegal address, misaligned access, assert, trap)", report::XidPointsTo::application};
    case 31: return {"GPU memory page fault (MMU): a kernel touched an unmapped address", report::XidPointsTo::application};
    case 32: return {"invalid or corrupted push buffer stream", report::XidPointsTo::driver};
    case 38: return {"driver firmware error", report::XidPointsTo::driver};
    case 43: return {"GPU stopped processing: a kernel of this process faulted and its channel was torn down (follows an illegal address or launch failure)", report::XidPointsTo::application};
    case 45: return {"preemptive cleanup: work was stopped because the process ended or was killed", report::XidPointsTo::application};
    case 48: return {"uncorrectable double-bit ECC error in device memory", report::XidPointsTo::hardware};
    case 61: case 62: return {"internal micro-controller error", report::XidPointsTo::driver};
    case 63: return {"ECC page retirement or row remapping recorded", report::XidPointsTo::hardware};
    case 64: return {"ECC page retirement or row remapping failed", report::XidPointsTo::hardware};
    case 68: return {"video processor exception", report::XidPointsTo::driver};
    case 69: return {"graphics engine class error", report::XidPointsTo::driver};
    case 74: return {"NVLink error", report::XidPointsTo::hardware};
    case 79: return {"GPU has fallen off the bus", report::XidPointsTo::hardware};
    case 92: return {"high single-bit ECC error rate", report::XidPointsTo::hardware};
    case 94: return {"contained ECC error: only the affected application was stopped", report::XidPointsTo::hardware};
    case 95: return {"uncontained ECC error: all applications on the GPU are affected; reset it", report::XidPointsTo::hardware};
    case 109: return {"context switch timeout", report::XidPointsTo::driver};
    case 119: case 120: return {"GSP firmware error or timeout", report::XidPointsTo::driver};
    case 121: return {"C2C link error", report::XidPointsTo::hardware};
    case 140: return {"unrecovered ECC error", report::XidPointsTo::hardware};
    case 154: return {"GPU recovery action required (reset or reboot)", report::XidPointsTo::hardware};
    default: return {"see NVIDIA's Xid catalog", report::XidPointsTo::unknown};
  }
}

std::uint64_t monotonic_now_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec) / 1000ULL;
}

std::uint64_t to_monotonic_us(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto mono_now = static_cast<long long>(monotonic_now_us());
  const auto ago = duration_cast<microseconds>(system_clock::now() - t).count();
  const long long v = mono_now - ago;
  return v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

namespace {

// Reads every record currently in the log. /dev/kmsg returns one record per read()
// and EAGAIN at the end (O_NONBLOCK); a regular file (recorded samples) returns
// chunks and 0 at the end. EPIPE means records were overwritten while reading: go on.
bool read_log(const std::string& path, std::string& text, std::string& reason) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    reason = path + ": " + std::strerror(errno);
    return false;
  }
  std::string buf(16384, '\0');
  constexpr size_t kMaxBytes = 64u << 20;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      text.append(buf.data(), static_cast<size_t>(n));
      if (text.size() > kMaxBytes) break;
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR || errno == EPIPE) continue;
    if (errno == EAGAIN) break;
    reason = path + ": " + std::strerror(errno);
    ::close(fd);
    return !text.empty();
  }
  ::close(fd);
  return true;
}

// Sequence number of a kmsg record line, if it is one.
std::optional<std::uint64_t> record_seq(std::string_view line) {
  std::uint64_t seq = 0, usec = 0;
  if (take_kmsg_prefix(line, seq, usec)) return seq;
  return std::nullopt;
}

}  // namespace

KernelLogCursor kernel_log_cursor(const std::string& path) {
  KernelLogCursor c;
  c.path = path;
  c.taken_at_us = monotonic_now_us();
  std::string text;
  c.readable = read_log(path, text, c.reason);
  if (!c.readable) return c;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    if (auto s = record_seq(rest.substr(0, nl))) c.last_seq = *s;
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return c;
}

std::vector<XidEvent> new_xid_lines_since(const KernelLogCursor& cursor) {
  std::vector<XidEvent> out;
  if (!cursor.readable) return out;
  std::string text, reason;
  if (!read_log(cursor.path, text, reason)) return out;
  for (auto& e : parse_xid_text(text)) {
    // Records without a sequence number cannot be ordered against the cursor: keep
    // them only when they carry a time after it.
    const bool newer = e.seq ? (!cursor.last_seq || *e.seq > *cursor.last_seq)
                             : (e.timestamp_us && *e.timestamp_us >= cursor.taken_at_us);
    if (newer) out.push_back(std::move(e));
  }
  return out;
}

std::vector<XidEvent> attribute_to_pid(const std::vector<XidEvent>& events, int pid,
                                       std::uint64_t start_us, std::uint64_t end_us,
                                       std::uint64_t slack_us) {
  std::vector<XidEvent> out;
  const std::uint64_t lo = start_us > slack_us ? start_us - slack_us : 0;
  const std::uint64_t hi = end_us + slack_us;
  for (const auto& e : events) {
    if (e.pid) {
      if (*e.pid == pid) out.push_back(e);
    } else if (e.timestamp_us && *e.timestamp_us >= lo && *e.timestamp_us <= hi) {
      out.push_back(e);
    }
  }
  return out;
}

report::XidLine to_xid_line(const XidEvent& e) {
  const auto m = xid_meaning(e.xid);
  report::XidLine x;
  x.timestamp_us = e.timestamp_us;
  x.pci = e.pci;
  x.xid = e.xid;
  x.pid = e.pid;
  if (!e.process_name.empty()) x.process = e.process_name;
  x.message = e.message;
  x.meaning = std::string(m.summary);
  x.points_to = m.points_to;
  return x;
}

std::vector<report::XidLine> to_xid_lines(const std::vector<XidEvent>& events) {
  std::vector<report::XidLine> out;
  out.reserve(events.size());
  for (const auto& e : events) out.push_back(to_xid_line(e));
  return out;
}

report::json to_json(const XidEvent& e) { return report::to_json(to_xid_line(e)); }

report::json to_json(const std::vector<XidEvent>& events) {
  report::json out = report::json::array();
  for (const auto& e : events) out.push_back(to_json(e));
  return out;
}

}  // namespace cudadiag::host

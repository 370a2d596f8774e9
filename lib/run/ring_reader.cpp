#include "run/ring_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#include "fence/ring_format.h"
#include "host/cuda_driver.h"
#include "util/demangle.h"
#include "util/hex.h"

namespace cudadiag::run {
namespace {

// The bytes of a ring, read piece by piece: from memory, or from a file through a
// window of bounded size (a ring file may be large and sparse, or crafted).
class Bytes {
 public:
  virtual ~Bytes() = default;
  virtual std::uint64_t size() const = 0;
  // Copies `n` bytes at `offset`; false when they are not all there.
  virtual bool copy(std::uint64_t offset, void* out, std::size_t n) = 0;
  // The first offset at or after `offset` that may hold anything but zeros (a sparse
  // file's holes are skipped without reading them).
  virtual std::uint64_t data_from(std::uint64_t offset) { return offset; }
};

class MemoryBytes final : public Bytes {
 public:
  explicit MemoryBytes(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  bool copy(std::uint64_t offset, void* out, std::size_t n) override {
    if (offset > bytes_.size() || bytes_.size() - offset < n) return false;
    std::memcpy(out, bytes_.data() + offset, n);
    return true;
  }

 private:
  std::string_view bytes_;
};

class FileBytes final : public Bytes {
 public:
  static constexpr std::size_t kWindow = 1u << 20;
  FileBytes(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  std::uint64_t size() const override { return size_; }
  std::uint64_t data_from(std::uint64_t offset) override {
    if (offset >= size_ || (offset >= data_begin_ && offset < data_end_)) return offset;
    const off_t data = lseek(fd_, static_cast<off_t>(offset), SEEK_DATA);
    if (data < 0) return errno == ENXIO ? size_ : offset;  // ENXIO: nothing but a hole to the end
    const off_t hole = lseek(fd_, data, SEEK_HOLE);
    data_begin_ = static_cast<std::uint64_t>(data);
    data_end_ = hole > data ? static_cast<std::uint64_t>(hole) : size_;
    return data_begin_;
  }
  bool copy(std::uint64_t offset, void* out, std::size_t n) override {
    if (offset > size_ || size_ - offset < n) return false;
    if (n > kWindow) return read_fully(offset, out, n);
    if (offset < window_begin_ || offset + n > window_begin_ + window_.size()) {
      const std::uint64_t length = std::min<std::uint64_t>(kWindow, size_ - offset);
      window_.resize(length);
      if (!read_fully(offset, window_.data(), length)) {
        window_.clear();
        return false;
      }
      window_begin_ = offset;
    }
    std::memcpy(out, window_.data() + (offset - window_begin_), n);
    return true;
  }

 private:
  bool read_fully(std::uint64_t offset, void* out, std::size_t n) {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      p += got;
      n -= static_cast<std::size_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
    return true;
  }

  int fd_;
  std::uint64_t size_;
  std::uint64_t data_begin_ = 0;  // the extent of data data_from() found last
  std::uint64_t data_end_ = 0;
  std::uint64_t window_begin_ = 0;
  std::string window_;
};

template <class T>
bool read_at(Bytes& bytes, std::uint64_t offset, T& out) {
  return bytes.copy(offset, &out, sizeof(T));
}

// How many whole `slot_bytes` records of a region at `offset` are present.
std::uint64_t present_slots(const Bytes& bytes, std::uint64_t offset, std::uint64_t capacity, std::uint64_t slot_bytes) {
  if (offset >= bytes.size()) return 0;
  return std::min<std::uint64_t>(capacity, (bytes.size() - offset) / slot_bytes);
}

using util::hex;

FenceSide side_of(ring::Side side) {
  switch (side) {
    case ring::Side::back: return FenceSide::back;
    case ring::Side::front: return FenceSide::front;
    case ring::Side::none: break;
  }
  return FenceSide::none;
}

// The code of an enum read from a file: any value of its underlying type may be there.
template <class Enum>
auto code_of(Enum e) {
  return static_cast<std::underlying_type_t<Enum>>(e);
}

std::string api_text(ring::Api api) {
  if (code_of(api) >= code_of(ring::Api::count)) return "unknown";
  return ring::api_name(api);
}

std::string unfenced_reason(const ring::AllocationSlot& s) {
  if (code_of(s.unfenced_reason) >= code_of(ring::Unfenced::count)) return "unknown reason";
  std::string text = ring::unfenced_text(s.unfenced_reason);
  if (s.unfenced_reason == ring::Unfenced::vmm_failed && code_of(s.failed_call) < code_of(ring::VmmCall::count) &&
      s.failed_call != ring::VmmCall::none) {
    text += ": ";
    text += ring::vmm_call_name(s.failed_call);
    text += " returned " + std::to_string(s.failed_result);
  }
  return text;
}

// The fields a record carries as they were written (the VALUE fields of the ring's lists).
void copy_values(AllocationRecord& to, const ring::AllocationSlot& from) {
  CUDADIAG_RING_ALLOCATION_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_SKIP)
}
void copy_values(LaunchRecord& to, const ring::LaunchSlot& from) {
  CUDADIAG_RING_LAUNCH_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_SKIP)
}
void copy_values(TmaMapRecord& to, const ring::TmaSlot& from) {
  CUDADIAG_RING_TMA_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_SKIP)
}
void copy_values(SlackWriteRecord& to, const ring::SlackWrite& from) {
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_SKIP)
}
void copy_values(IpcFailureRecord& to, const ring::IpcFailure& from) {
  CUDADIAG_RING_IPC_FAILURE_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_SKIP)
}
void copy_values(DeviceIdentity& to, const ring::DeviceSlot& from) {
  CUDADIAG_RING_DEVICE_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_SKIP)
}
void copy_values(ProcessIdentity& to, const ring::IdentitySlot& from) {
  CUDADIAG_RING_IDENTITY_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_SKIP)
}

AllocationRecord allocation_of(const ring::AllocationSlot& s) {
  AllocationRecord a;
  a.seq = s.seq;
  copy_values(a, s);
  a.side = side_of(s.side);
  a.freed = s.state != ring::State::live;
  a.quarantine_released = s.state == ring::State::released || s.state == ring::State::freed_unguarded;
  a.api = api_text(s.api);
  if (a.side == FenceSide::none) a.unfenced_reason = unfenced_reason(s);
  if (s.site != ring::kNoSite) a.site = s.site;
  return a;
}

// Kernel names longer than this are shown cut (with "...") and not demangled; the
// demangler gets this many bytes of names in all, then names are shown as recorded.
constexpr std::size_t kMaxNameBytes = 64u << 10;
constexpr std::size_t kDemangleBudget = 16u << 20;

// Reads the names region as far as it was written and as far as the file goes. The
// writer stores names one after another, each followed by a NUL: a launch's reference
// counts only when it names one of them, and each name is demangled once.
class Names {
 public:
  Names(Bytes& bytes, const ring::Header& h) {
    std::uint64_t used = std::min<std::uint64_t>(h.names_used, h.names_capacity);
    if (h.names_offset < bytes.size()) used = std::min<std::uint64_t>(used, bytes.size() - h.names_offset);
    else used = 0;
    region_.resize(used);
    if (used > 0 && !bytes.copy(h.names_offset, region_.data(), used)) region_.clear();
    std::uint32_t start = 0;
    for (std::uint32_t i = 0; i < region_.size(); ++i) {
      if (region_[i] != '\0') continue;
      starts_.emplace(start, i - start);
      start = i + 1;
    }
  }

  std::string name_of(const ring::LaunchSlot& s) {
    if (s.name_offset != ring::kNoName) {
      const auto it = starts_.find(s.name_offset);
      if (it != starts_.end() && it->second == s.name_length) {
        auto [cached, added] = by_offset_.try_emplace(s.name_offset);
        if (added) cached->second = readable(std::string_view(region_).substr(s.name_offset, s.name_length));
        return cached->second;
      }
    }
    const std::string prefix(s.name_prefix, strnlen(s.name_prefix, sizeof s.name_prefix));
    if (prefix.empty()) return "";
    // Only the first bytes were kept (the names region was full): not demangled.
    if (prefix.size() == sizeof s.name_prefix - 1) return prefix + "...";
    auto [cached, added] = by_prefix_.try_emplace(prefix);
    if (added) cached->second = readable(prefix);
    return cached->second;
  }

 private:
  std::string readable(std::string_view name) {
    if (name.size() > kMaxNameBytes) return std::string(name.substr(0, kMaxNameBytes)) + "...";
    if (demangled_bytes_ + name.size() > kDemangleBudget) return std::string(name);
    demangled_bytes_ += name.size();
    return demangle(std::string(name));
  }

  std::string region_;
  std::unordered_map<std::uint32_t, std::uint32_t> starts_;  // name offset -> length
  std::unordered_map<std::uint32_t, std::string> by_offset_;
  std::unordered_map<std::string, std::string> by_prefix_;
  std::size_t demangled_bytes_ = 0;
};

LaunchRecord launch_of(const ring::LaunchSlot& s, Names& names) {
  LaunchRecord l;
  l.seq = s.seq;
  copy_values(l, s);
  l.kernel = names.name_of(s);
  if (l.kernel.empty()) l.kernel = "function " + hex(s.function);
  l.api = api_text(s.api);
  const std::uint32_t n = std::min<std::uint32_t>(s.pointer_count, ring::kMaxPointerArgs);
  l.pointer_args.assign(s.pointer_args, s.pointer_args + n);
  l.returned = s.returned != 0;
  return l;
}

TmaMapRecord tma_map_of(const ring::TmaSlot& s) {
  TmaMapRecord t;
  t.seq = s.seq;
  copy_values(t, s);
  t.api = api_text(s.api);
  t.in_fenced = (s.flags & ring::kTmaInFenced) != 0;
  t.near_guard = (s.flags & ring::kTmaNearGuard) != 0;
  t.past_buffer = (s.flags & ring::kTmaPastBuffer) != 0;
  return t;
}

InterposerSummary summary_of(const ring::Header& h) {
  InterposerSummary s;
  s.loaded = true;
  s.cuda_seen = h.cuda_seen != 0;
  s.allocations = h.allocations;
  s.fenced = h.fenced;
  s.frees = h.frees;
  s.launches = h.launches;
  s.quarantined_bytes = h.quarantined_bytes;
  s.tma_encodes = h.tma_encodes;
  s.tma_near_guard = h.tma_near_guard;
  s.dropped_allocations = h.dropped_allocations;
  s.fence_align = h.fence_align;
  s.side = side_of(static_cast<ring::Side>(h.fence_side));
  s.quarantine_limit_bytes = h.quarantine_limit_bytes;
  s.recycle_limit_bytes = h.recycle_limit_bytes;
  s.recycled = h.recycled;
  s.slack_watched = h.slack_watched > 0;
  s.ipc_exports = h.ipc_exports;
  s.ipc_imports = h.ipc_imports;
  s.program_mappings = h.program_mappings;
  s.guard_mode = h.guard_mode == static_cast<std::uint8_t>(fence::GuardMode::granule) ? fence::GuardMode::granule
                                                                                        : fence::GuardMode::scaled;
  s.granularity = h.granularity;
  s.guard_limit_bytes = h.guard_limit_bytes;
  s.guard_total_limit_bytes = h.guard_total_limit_bytes;
  s.guards_cut = h.guards_cut;
  s.end_wait_result = h.end_wait_result;
  return s;
}

// Complete allocation records, oldest first; torn ones counted. Only the slots present
// in the file are read.
void read_allocations(Bytes& bytes, const ring::Header& h, RingRead& r) {
  std::uint64_t torn = 0;
  const std::uint64_t n = present_slots(bytes, h.allocations_offset, h.allocation_capacity, sizeof(ring::AllocationSlot));
  for (std::uint64_t i = 0; i < n; ++i) {
    ring::AllocationSlot s{};
    // A hole holds slots never written.
    const std::uint64_t offset = h.allocations_offset + i * sizeof s;
    if (const std::uint64_t data = bytes.data_from(offset); data > offset) {
      i = (data - h.allocations_offset) / sizeof s;
      if (i >= n) break;
    }
    if (!read_at(bytes, h.allocations_offset + i * sizeof s, s)) break;
    if (s.stamp == 0) continue;  // never written
    if (s.stamp != ring::complete_stamp(s.seq)) {
      ++torn;
      continue;
    }
    r.log.allocations.push_back(allocation_of(s));
  }
  std::sort(r.log.allocations.begin(), r.log.allocations.end(),
            [](const AllocationRecord& a, const AllocationRecord& b) { return a.seq < b.seq; });
  r.torn_records += torn;
  r.log.summary.dropped_allocations += torn;
}

// The records of a ring of the latest ones (launches, TMA descriptors), from the oldest
// kept one to the newest, handed to `take`; returns how many are lost: overwritten, cut
// off, or torn (counted in torn_records as well). Only slots present in the file are
// visited: the work is bounded by the file, whatever the header's counters say.
template <class Slot, class Take>
std::uint64_t read_latest(Bytes& bytes, std::uint64_t offset, std::uint64_t head, std::uint64_t capacity, RingRead& r,
                          Take&& take) {
  if (capacity == 0) return head;
  const std::uint64_t first = head > capacity ? head - capacity : 0;
  const std::uint64_t present = present_slots(bytes, offset, capacity, sizeof(Slot));
  std::uint64_t taken = 0;
  // Slots in the order of their records: from the oldest kept one's slot to the end,
  // then from the start.
  const std::uint64_t first_slot = first % capacity;
  bool done = false;
  for (int pass = 0; pass < 2 && !done; ++pass) {
    const std::uint64_t begin = pass == 0 ? first_slot : 0;
    const std::uint64_t end = std::min(present, pass == 0 ? capacity : first_slot);
    for (std::uint64_t slot = begin; slot < end; ++slot) {
      // A hole holds no record: those slots are lost (counted by head - taken).
      const std::uint64_t at = offset + slot * sizeof(Slot);
      if (const std::uint64_t data = bytes.data_from(at); data > at) {
        slot = (data - offset) / sizeof(Slot);
        if (slot >= end) break;
      }
      const std::uint64_t seq = first + (slot + capacity - first_slot) % capacity;
      if (seq >= head) {  // never used, nor any slot after it
        done = true;
        break;
      }
      Slot s{};
      if (!read_at(bytes, offset + slot * sizeof s, s)) break;
      if (s.stamp != ring::complete_stamp(seq) || s.seq != seq) {
        ++r.torn_records;
        continue;
      }
      take(s);
      ++taken;
    }
  }
  return head - taken;
}

void read_launches(Bytes& bytes, const ring::Header& h, Names& names, RingRead& r) {
  r.log.summary.dropped_launches = read_latest<ring::LaunchSlot>(
      bytes, h.launches_offset, h.launches, h.launch_capacity, r,
      [&](const ring::LaunchSlot& s) { r.log.launches.push_back(launch_of(s, names)); });
}

void read_tma_maps(Bytes& bytes, const ring::Header& h, RingRead& r) {
  r.log.summary.dropped_tma_maps =
      read_latest<ring::TmaSlot>(bytes, h.tma_offset, h.tma_encodes, h.tma_capacity, r,
                                 [&](const ring::TmaSlot& s) { r.log.tma_maps.push_back(tma_map_of(s)); });
}

std::string bounded(const char* text, std::size_t size) { return std::string(text, strnlen(text, size)); }

// The table of sites, filled in order and never overwritten: records 0 .. sites - 1 that
// are present and complete (a lost one stays, unrecorded, so that indices hold).
void read_sites(Bytes& bytes, const ring::Header& h, RingRead& r) {
  r.log.stacks_captured = (h.stack_flags & ring::kStacksHost) != 0;
  r.log.sites_dropped = h.sites_dropped;
  const std::uint64_t used = std::min<std::uint64_t>(h.sites, h.site_capacity);
  const std::uint64_t present = std::min(used, present_slots(bytes, h.sites_offset, h.site_capacity, sizeof(ring::SiteSlot)));
  r.log.sites.resize(present);
  for (std::uint64_t i = 0; i < present; ++i) {
    ring::SiteSlot s{};
    if (!read_at(bytes, h.sites_offset + i * sizeof s, s)) break;
    if (s.stamp != ring::complete_stamp(i) || s.seq != i) {
      ++r.torn_records;
      continue;
    }
    AllocationSite& site = r.log.sites[i];
    site.recorded = true;
    site.frames.assign(s.frames, s.frames + std::min(s.frame_count, ring::kSiteFrames));
    for (std::uint32_t k = 0; k < std::min(s.python_count, ring::kPythonFrames); ++k) {
      const ring::PythonFrame& f = s.python[k];
      PythonFrameRecord p;
      p.file = bounded(f.file, sizeof f.file);
      p.line = f.line;
      p.function = bounded(f.function, sizeof f.function);
      p.user = (f.flags & ring::kPythonUserFrame) != 0;
      p.file_cut = (f.flags & ring::kPythonFileCut) != 0;
      site.python.push_back(std::move(p));
    }
    switch (static_cast<ring::PythonState>(s.python_state)) {
      case ring::PythonState::no_python_code:
        site.python_note =
            "no Python line: the allocating thread was running no Python code (PyTorch runs backward on threads of its "
            "own)";
        break;
      case ring::PythonState::unreadable:
        site.python_note = "no Python line: the interpreter is not one whose frames the interposer reads (CPython 3.9 "
                           "to 3.13 with the GIL)";
        break;
      case ring::PythonState::none:
      case ring::PythonState::read:
        break;
    }
  }
}

void read_modules(Bytes& bytes, const ring::Header& h, RingRead& r) {
  const std::uint64_t used = std::min<std::uint64_t>(h.modules, h.module_capacity);
  const std::uint64_t present =
      std::min(used, present_slots(bytes, h.modules_offset, h.module_capacity, sizeof(ring::ModuleSlot)));
  for (std::uint64_t i = 0; i < present; ++i) {
    ring::ModuleSlot s{};
    if (!read_at(bytes, h.modules_offset + i * sizeof s, s)) break;
    if (s.stamp != ring::complete_stamp(i) || s.seq != i || s.begin >= s.end) {
      ++r.torn_records;
      continue;
    }
    r.log.modules.push_back(ModuleRecord{s.begin, s.end, s.bias, bounded(s.path, sizeof s.path)});
  }
}

void read_driver_calls(const ring::Header& h, RingRead& r) {
  for (std::uint32_t i = 0; i < ring::kDriverCallKinds; ++i) {
    if (h.driver_calls[i] == 0) continue;
    r.driver_calls.push_back(
        DriverCallCost{ring::driver_call_name(static_cast<ring::DriverCall>(i)), h.driver_calls[i], h.driver_ns[i]});
  }
  r.handles_reused = h.handles_reused;
  r.reservations_reused = h.reservations_reused;
}

// What happened to the processes of the run (the header's events).
void read_process_events(const ring::Header& h, RingRead& r) {
  const std::uint32_t n = std::min(h.process_events, ring::kMaxProcessEvents);
  for (std::uint32_t i = 0; i < n; ++i) {
    const ring::ProcessEvent& e = h.events[i];
    if (e.stamp != ring::complete_stamp(i) || e.seq != i || e.kind == 0 ||
        e.kind >= static_cast<std::uint16_t>(ring::EventKind::count)) {
      ++r.log.process_events_lost;
      continue;
    }
    const auto kind = static_cast<ring::EventKind>(e.kind);
    r.log.process_events.push_back(ProcessEventRecord{
        e.pid, ring::event_text(kind), bounded(e.program, sizeof e.program),
        ring::event_escapes(kind)});
  }
  r.log.process_events_lost += h.process_events - n;
  r.log.preloads_restored = h.preloads_restored;
  r.log.escapes = h.escapes;
}

// The slack writes the header keeps: at most kMaxSlackWrites, complete ones only.
void read_slack_writes(const ring::Header& h, RingRead& r) {
  const std::uint64_t n = std::min<std::uint64_t>(h.slack_writes, ring::kMaxSlackWrites);
  for (std::uint64_t i = 0; i < n; ++i) {
    const ring::SlackWrite& w = h.slack[i];
    const bool known_check = code_of(w.seen_at) >= code_of(ring::SlackCheck::free) &&
                             code_of(w.seen_at) <= code_of(ring::SlackCheck::exit);
    if (w.stamp != ring::complete_stamp(i) || w.seq != i || !known_check || w.slack_bytes > ring::kMaxSlackBytes ||
        w.first_offset > w.last_offset || w.last_offset >= w.slack_bytes) {
      ++r.log.slack_writes_lost;
      continue;
    }
    SlackWriteRecord x;
    copy_values(x, w);
    x.seen_at = ring::slack_check_text(w.seen_at);
    r.log.slack_writes.push_back(std::move(x));
  }
  r.log.slack_writes_lost += h.slack_writes - n;
}

// The failed CUDA IPC hand-overs the header keeps: at most kMaxIpcFailures, complete ones only.
void read_ipc_failures(const ring::Header& h, RingRead& r) {
  const std::uint64_t n = std::min<std::uint64_t>(h.ipc_failures, ring::kMaxIpcFailures);
  for (std::uint64_t i = 0; i < n; ++i) {
    const ring::IpcFailure& f = h.ipc_failure[i];
    if (f.stamp != ring::complete_stamp(i) || f.seq != i || f.step == ring::IpcStep::none ||
        code_of(f.step) >= code_of(ring::IpcStep::count)) {
      ++r.log.ipc_failures_lost;
      continue;
    }
    IpcFailureRecord x;
    copy_values(x, f);
    x.what = ring::ipc_step_text(f.step);
    r.log.ipc_failures.push_back(std::move(x));
  }
  r.log.ipc_failures_lost += h.ipc_failures - n;
}

// Who recorded here (written once by the ring's owner) and the devices it used.
void read_identity(const ring::Header& h, RingRead& r) {
  const ring::IdentitySlot& s = h.identity;
  const auto known = [](ring::LauncherVar v) { return code_of(v) < code_of(ring::LauncherVar::count); };
  if (s.stamp != ring::complete_stamp(0) || s.seq != 0 || !known(s.rank_from) || !known(s.local_rank_from) ||
      !known(s.world_size_from))
    return;
  ProcessIdentity& p = r.log.process;
  p.recorded = true;
  copy_values(p, s);
  p.exe = bounded(s.exe, sizeof s.exe);
  p.rank_from = ring::launcher_var_name(s.rank_from);
  p.local_rank_from = ring::launcher_var_name(s.local_rank_from);
  p.world_size_from = ring::launcher_var_name(s.world_size_from);
}

void read_devices(const ring::Header& h, RingRead& r) {
  const std::uint32_t n = std::min(h.devices, ring::kMaxDevices);
  for (std::uint32_t i = 0; i < n; ++i) {
    const ring::DeviceSlot& s = h.device[i];
    if (s.stamp != ring::complete_stamp(i) || s.seq != i || s.ordinal < 0) {
      ++r.log.devices_lost;
      continue;
    }
    DeviceIdentity d;
    copy_values(d, s);
    host::cuda_driver::Uuid uuid{};
    std::memcpy(uuid.bytes, s.uuid, sizeof uuid.bytes);
    if (std::any_of(std::begin(s.uuid), std::end(s.uuid), [](std::uint8_t b) { return b != 0; }))
      d.uuid = host::cuda_driver::uuid_string(uuid);
    d.pci_bus_id = bounded(s.pci_bus_id, sizeof s.pci_bus_id);
    r.log.devices.push_back(std::move(d));
  }
  r.log.devices_lost += h.devices - n;
}

// The layout the header declares is the one the interposer writes for its counts, and
// the counts are within what it writes: the reader's work is bounded by them.
bool layout_matches(const ring::Header& h) {
  const ring::Layout l = ring::layout_for(ring::capacities_of(h));
  const bool header_only = (h.ring_flags & ring::kRingNoRoom) != 0;
  const bool counts = header_only ? h.allocation_capacity == 0 && h.launch_capacity == 0 && h.tma_capacity == 0 &&
                                        h.names_capacity == 0 && h.site_capacity == 0 && h.module_capacity == 0
                                  : h.allocation_capacity > 0 && h.launch_capacity > 0 && h.tma_capacity > 0 &&
                                        h.allocation_capacity <= ring::kMaxSlots &&
                                        h.launch_capacity <= ring::kMaxSlots && h.tma_capacity <= ring::kMaxSlots &&
                                        h.names_capacity <= ring::kMaxNameBytes &&
                                        h.site_capacity <= ring::kMaxSiteSlots &&
                                        h.module_capacity <= ring::kMaxModuleSlots;
  return counts && h.header_bytes == ring::kHeaderBytes && h.allocation_slot_bytes == sizeof(ring::AllocationSlot) &&
         h.launch_slot_bytes == sizeof(ring::LaunchSlot) && h.allocations_offset == l.allocations_offset &&
         h.launches_offset == l.launches_offset && h.tma_offset == l.tma_offset && h.names_offset == l.names_offset &&
         h.sites_offset == l.sites_offset && h.modules_offset == l.modules_offset && h.file_bytes == l.file_bytes;
}

std::string directory_of(const std::string& origin) {
  const auto slash = origin.rfind('/');
  return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : origin.substr(0, slash);
}

// Why a ring had no room, in words.
std::string no_room_text(const ring::Header& h, const std::string& origin) {
  const std::string dir = directory_of(origin);
  std::string why = h.layout_errno == ENOSPC   ? "no room in " + dir
                    : h.layout_errno == EDQUOT ? "over the disk quota in " + dir
                                               : std::string(std::strerror(h.layout_errno)) + " in " + dir;
  return "the ring could not be written: " + why + " (it needed " + std::to_string(h.wanted_bytes) +
         " bytes); allocations and launches were not recorded";
}

RingRead fail(RingStatus status, std::string message) {
  RingRead r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

}  // namespace

const char* ring_status_name(RingStatus s) {
  switch (s) {
    case RingStatus::ok: return "ok";
    case RingStatus::missing: return "missing";
    case RingStatus::empty: return "empty";
    case RingStatus::incomplete: return "incomplete";
    case RingStatus::truncated: return "truncated";
    case RingStatus::no_room: return "no_room";
    case RingStatus::bad_magic: return "bad_magic";
    case RingStatus::bad_version: return "bad_version";
    case RingStatus::unreadable: return "unreadable";
  }
  return "unknown";
}

namespace {

RingRead parse(Bytes& bytes, const std::string& origin) {
  if (bytes.size() == 0)
    return fail(RingStatus::empty, origin + ": empty file: no interposer wrote it (was it preloaded?)");
  std::uint64_t magic = 0;
  bytes.copy(0, &magic, std::min<std::uint64_t>(bytes.size(), sizeof magic));
  if (magic == 0)
    return fail(RingStatus::incomplete,
                origin + ": the header was never completed (the process died while the interposer laid it out)");
  if (bytes.size() < sizeof magic || magic != ring::kMagic)
    return fail(RingStatus::bad_magic, origin + ": not a cudadiag ring file (magic " + hex(magic) + ")");
  ring::Header h{};
  if (!read_at(bytes, 0, h)) {
    RingRead r = fail(RingStatus::truncated, origin + ": cut short inside the header (" +
                                                 std::to_string(bytes.size()) + " bytes): nothing recorded is left");
    r.log.summary.loaded = true;
    r.log.ring.cut_short = true;
    return r;
  }
  if (h.version != ring::kVersion)
    return fail(RingStatus::bad_version, origin + ": ring format version " + std::to_string(h.version) +
                                             ", written by another cudadiag's interposer (this cudadiag reads version " +
                                             std::to_string(ring::kVersion) + " only)");
  if (!layout_matches(h))
    return fail(RingStatus::bad_version, origin + ": the header's layout does not match its record counts");

  RingRead r;
  r.status = RingStatus::ok;
  r.log.summary = summary_of(h);
  r.owner_pid = h.owner_pid;
  r.processes_loaded = h.processes_loaded;
  r.other_cuda_processes = h.other_cuda_processes;
  r.log.ring.unreserved = (h.ring_flags & ring::kRingReserved) == 0;
  read_process_events(h, r);
  read_slack_writes(h, r);
  read_ipc_failures(h, r);
  read_driver_calls(h, r);
  read_identity(h, r);
  if (!r.log.process.recorded) r.log.process.pid = h.owner_pid;
  read_devices(h, r);
  if (h.ring_flags & ring::kRingNoRoom) {
    r.status = RingStatus::no_room;
    r.message = origin + ": " + no_room_text(h, origin);
    r.log.ring.no_room = no_room_text(h, origin);
    r.log.summary.dropped_allocations = h.allocations;
    r.log.summary.dropped_launches = h.launches;
    r.log.summary.dropped_tma_maps = h.tma_encodes;
    return r;
  }
  if (bytes.size() < h.file_bytes) {
    r.status = RingStatus::truncated;
    r.log.ring.cut_short = true;
    r.message = origin + ": " + std::to_string(bytes.size()) + " of " + std::to_string(h.file_bytes) +
                " bytes: records past the end are lost";
  }
  Names names(bytes, h);
  read_allocations(bytes, h, r);
  read_launches(bytes, h, names, r);
  read_tma_maps(bytes, h, r);
  read_sites(bytes, h, r);
  read_modules(bytes, h, r);
  return r;
}

// Bytes free for this user in the file system holding `dir`, when known.
std::optional<std::uint64_t> free_bytes(const std::string& dir) {
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

}  // namespace

RingRead parse_ring(std::string_view bytes, const std::string& origin) {
  MemoryBytes source(bytes);
  return parse(source, origin);
}

RingRead read_ring(const std::filesystem::path& file) {
  const std::string origin = file.string();
  // Not through a link, never blocking on a FIFO or a device the program left there.
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT)
      return fail(RingStatus::missing, origin +
                                           ": no such file: the interposer never loaded (not preloaded, or "
                                           "CUDADIAG_RING did not reach the program)");
    return fail(RingStatus::unreadable, origin + ": cannot be read: " + std::strerror(errno));
  }
  struct stat st {};
  RingRead r;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    r = fail(RingStatus::unreadable, origin + ": not a regular file");
  } else {
    FileBytes source(fd, static_cast<std::uint64_t>(st.st_size));
    r = parse(source, origin);
  }
  close(fd);
  if (r.status == RingStatus::empty) {
    // The interposer empties the file when not even the header had room.
    const std::string dir = directory_of(origin);
    if (const auto room = free_bytes(dir); room && *room < ring::kHeaderBytes) {
      r.message = origin + ": empty: the ring could not be written: no room in " + dir + " (" +
                  std::to_string(*room) + " bytes free); allocations and launches were not recorded";
      r.log.ring.no_room = "the ring could not be written: no room in " + dir +
                           "; allocations and launches were not recorded";
    }
  }
  return r;
}

std::vector<std::filesystem::path> process_ring_files(const std::filesystem::path& file) {
  std::vector<std::pair<long long, std::filesystem::path>> found;
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  const std::string prefix = file.filename().string() + ".";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.size() > 10 || !std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    found.emplace_back(std::stoll(pid), entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace cudadiag::run

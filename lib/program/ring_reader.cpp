#include "program/ring_reader.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "program/ring_format.h"
#include "util/demangle.h"

namespace cudadiag::program {
namespace {

template <class T>
bool read_at(std::string_view bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

FenceSide side_of(std::uint8_t code) {
  switch (static_cast<ring::Side>(code)) {
    case ring::Side::back: return FenceSide::back;
    case ring::Side::front: return FenceSide::front;
    case ring::Side::none: break;
  }
  return FenceSide::none;
}

std::string api_text(std::uint16_t code) {
  if (code >= static_cast<std::uint16_t>(ring::Api::count)) return "unknown";
  return ring::api_name(static_cast<ring::Api>(code));
}

std::string unfenced_reason(const ring::AllocationSlot& s) {
  if (s.unfenced_reason >= static_cast<std::uint8_t>(ring::Unfenced::count)) return "unknown reason";
  const auto why = static_cast<ring::Unfenced>(s.unfenced_reason);
  std::string text = ring::unfenced_text(why);
  if (why == ring::Unfenced::vmm_failed && s.failed_call < static_cast<std::uint8_t>(ring::VmmCall::count) &&
      s.failed_call != static_cast<std::uint8_t>(ring::VmmCall::none)) {
    text += ": ";
    text += ring::vmm_call_name(static_cast<ring::VmmCall>(s.failed_call));
    text += " returned " + std::to_string(s.failed_result);
  }
  return text;
}

AllocationRecord allocation_of(const ring::AllocationSlot& s) {
  AllocationRecord a;
  a.seq = s.seq;
  a.address = s.address;
  a.bytes = s.bytes;
  a.mapped_begin = s.mapped_begin;
  a.mapped_end = s.mapped_end;
  a.guard_begin = s.guard_begin;
  a.guard_end = s.guard_end;
  a.side = side_of(s.side);
  const auto state = static_cast<ring::State>(s.state);
  a.freed = state != ring::State::live;
  a.quarantine_released = state == ring::State::released || state == ring::State::freed_unguarded;
  a.api = api_text(s.api);
  if (a.side == FenceSide::none) a.unfenced_reason = unfenced_reason(s);
  return a;
}

// Reads the names region as far as it was written and as far as the file goes.
class Names {
 public:
  Names(std::string_view bytes, const ring::Header& h) {
    const std::uint64_t used = std::min<std::uint64_t>(h.names_used, h.names_capacity);
    if (h.names_offset < bytes.size()) region_ = bytes.substr(h.names_offset, used);
  }

  std::string name_of(const ring::LaunchSlot& s) const {
    if (s.name_offset != ring::kNoName && std::uint64_t{s.name_offset} + s.name_length <= region_.size())
      return demangle(std::string(region_.substr(s.name_offset, s.name_length)));
    const std::string prefix(s.name_prefix, strnlen(s.name_prefix, sizeof s.name_prefix));
    if (prefix.empty()) return "";
    // Only the first bytes were kept (the names region was full): not demangled.
    return prefix.size() == sizeof s.name_prefix - 1 ? prefix + "..." : demangle(prefix);
  }

 private:
  std::string_view region_;
};

LaunchRecord launch_of(const ring::LaunchSlot& s, const Names& names) {
  LaunchRecord l;
  l.seq = s.seq;
  l.kernel = names.name_of(s);
  if (l.kernel.empty()) l.kernel = "function " + hex(s.function);
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = s.grid[i];
    l.block[i] = s.block[i];
  }
  l.dynamic_smem = s.dynamic_smem;
  l.stream = s.stream;
  l.api = api_text(s.api);
  const std::uint32_t n = std::min<std::uint32_t>(s.pointer_count, ring::kMaxPointerArgs);
  l.pointer_args.assign(s.pointer_args, s.pointer_args + n);
  return l;
}

TmaMapRecord tma_map_of(const ring::TmaSlot& s) {
  TmaMapRecord t;
  t.seq = s.seq;
  t.api = api_text(s.api);
  t.address = s.global_address;
  t.span_bytes = s.span_bytes;
  t.rank = s.rank;
  t.result = s.result;
  t.allocation_address = s.allocation_address;
  t.allocation_bytes = s.allocation_bytes;
  t.in_fenced = (s.flags & ring::kTmaInFenced) != 0;
  t.mapped_after = s.mapped_after;
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
  return s;
}

// Complete allocation records, oldest first; torn ones counted.
void read_allocations(std::string_view bytes, const ring::Header& h, RingRead& r) {
  std::uint64_t torn = 0;
  for (std::uint32_t i = 0; i < h.allocation_capacity; ++i) {
    ring::AllocationSlot s{};
    if (!read_at(bytes, h.allocations_offset + std::uint64_t{i} * sizeof s, s)) break;
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
// off, or torn (counted in torn_records as well).
template <class Slot, class Take>
std::uint64_t read_latest(std::string_view bytes, std::uint64_t offset, std::uint64_t head, std::uint64_t capacity,
                          RingRead& r, Take&& take) {
  const std::uint64_t first = head > capacity ? head - capacity : 0;
  std::uint64_t dropped = first;
  for (std::uint64_t seq = first; seq < head; ++seq) {
    Slot s{};
    if (!read_at(bytes, offset + (seq % capacity) * sizeof s, s)) {
      ++dropped;
      continue;
    }
    if (s.stamp != ring::complete_stamp(seq) || s.seq != seq) {
      ++dropped;
      ++r.torn_records;
      continue;
    }
    take(s);
  }
  return dropped;
}

void read_launches(std::string_view bytes, const ring::Header& h, const Names& names, RingRead& r) {
  r.log.summary.dropped_launches = read_latest<ring::LaunchSlot>(
      bytes, h.launches_offset, h.launches, h.launch_capacity, r,
      [&](const ring::LaunchSlot& s) { r.log.launches.push_back(launch_of(s, names)); });
}

void read_tma_maps(std::string_view bytes, const ring::Header& h, RingRead& r) {
  r.log.summary.dropped_tma_maps =
      read_latest<ring::TmaSlot>(bytes, h.tma_offset, h.tma_encodes, h.tma_capacity, r,
                                 [&](const ring::TmaSlot& s) { r.log.tma_maps.push_back(tma_map_of(s)); });
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

bool layout_matches(const ring::Header& h) {
  const ring::Layout l = ring::layout_for(h.allocation_capacity, h.launch_capacity, h.tma_capacity, h.names_capacity);
  return h.header_bytes == ring::kHeaderBytes && h.allocation_slot_bytes == sizeof(ring::AllocationSlot) &&
         h.launch_slot_bytes == sizeof(ring::LaunchSlot) && h.allocations_offset == l.allocations_offset &&
         h.launches_offset == l.launches_offset && h.tma_offset == l.tma_offset && h.names_offset == l.names_offset &&
         h.file_bytes == l.file_bytes && h.launch_capacity > 0 && h.allocation_capacity > 0 && h.tma_capacity > 0;
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
    case RingStatus::bad_magic: return "bad_magic";
    case RingStatus::bad_version: return "bad_version";
    case RingStatus::unreadable: return "unreadable";
  }
  return "unknown";
}

RingRead parse_ring(std::string_view bytes, const std::string& origin) {
  if (bytes.empty())
    return fail(RingStatus::empty, origin + ": empty file: no interposer wrote it (was it preloaded?)");
  std::uint64_t magic = 0;
  std::memcpy(&magic, bytes.data(), std::min(bytes.size(), sizeof magic));
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
    return r;
  }
  if (h.version != ring::kVersion)
    return fail(RingStatus::bad_version, origin + ": ring format version " + std::to_string(h.version) +
                                             " (this cudadiag reads version " + std::to_string(ring::kVersion) + ")");
  if (!layout_matches(h))
    return fail(RingStatus::bad_version, origin + ": the header's layout does not match its record counts");

  RingRead r;
  r.status = RingStatus::ok;
  r.log.summary = summary_of(h);
  r.owner_pid = h.owner_pid;
  r.processes_loaded = h.processes_loaded;
  r.other_cuda_processes = h.other_cuda_processes;
  if (bytes.size() < h.file_bytes) {
    r.status = RingStatus::truncated;
    r.message = origin + ": " + std::to_string(bytes.size()) + " of " + std::to_string(h.file_bytes) +
                " bytes: records past the end are lost";
  }
  const Names names(bytes, h);
  read_allocations(bytes, h, r);
  read_launches(bytes, h, names, r);
  read_tma_maps(bytes, h, r);
  read_driver_calls(h, r);
  return r;
}

RingRead read_ring(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    return fail(RingStatus::missing, file.string() +
                                         ": no such file: the interposer never loaded (not preloaded, or "
                                         "CUDADIAG_RING did not reach the program)");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream content;
  if (!in || !(content << in.rdbuf())) {
    // An empty file makes the stream copy fail too: tell it apart.
    if (in && std::filesystem::file_size(file, ec) == 0 && !ec) return parse_ring({}, file.string());
    return fail(RingStatus::unreadable, file.string() + ": cannot be read");
  }
  const std::string bytes = content.str();
  return parse_ring(bytes, file.string());
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

}  // namespace cudadiag::program

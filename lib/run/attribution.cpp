#include "run/attribution.h"

#include <algorithm>

#include <fmt/format.h>

#include "host/xid.h"
#include "run/ipc_records.h"

namespace cudadiag::run {
namespace {

// [lo, hi): where the faulting byte can be.
struct Span {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
};

bool overlaps(Span s, std::uint64_t begin, std::uint64_t end) { return begin < end && s.lo < end && begin < s.hi; }

std::uint64_t end_of(const AllocationRecord& a) { return a.address + a.bytes; }

// a - b, or 0 (a log that contradicts itself must not wrap around).
std::uint64_t minus(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

// The address range the allocation owns for the purpose of "was this pointer passed
// to a kernel": its buffer and what was mapped for it (one past the end included, a
// pointer to the end is a common kernel argument).
bool owns_pointer(const AllocationRecord& a, std::uint64_t p) {
  const std::uint64_t begin = a.mapped_begin && a.mapped_begin < a.address ? a.mapped_begin : a.address;
  const std::uint64_t end = std::max(end_of(a), a.mapped_end);
  return p >= begin && p <= end;
}

void set_past_end(Attribution& r, const AllocationRecord& a, Span s, std::uint64_t from) {
  r.relation = Relation::past_end;
  const std::uint64_t first = std::max(s.lo, from);
  r.distance_min = minus(first, end_of(a));
  r.distance_max = minus(s.hi - 1, end_of(a));
}

void set_before_start(Attribution& r, const AllocationRecord& a, Span s, std::uint64_t to) {
  r.relation = Relation::before_start;
  const std::uint64_t last = std::min(s.hi, to) - 1;
  r.distance_min = minus(a.address, last);
  r.distance_max = minus(a.address, s.lo);
}

// Live allocations before freed ones, newest first within each: a quarantine that was
// released may have been reused by a newer allocation.
std::vector<const AllocationRecord*> search_order(const InterposerLog& log) {
  std::vector<const AllocationRecord*> out;
  for (int pass = 0; pass < 2; ++pass)
    for (auto it = log.allocations.rbegin(); it != log.allocations.rend(); ++it)
      if (it->freed == (pass == 1)) out.push_back(&*it);
  return out;
}

// The guard, the buffer, or (for a freed allocation) the whole quarantined range.
bool locate_in_ranges(const InterposerLog& log, Span s, Attribution& r) {
  const auto order = search_order(log);
  for (const auto* a : order) {
    if (a->side == FenceSide::none || !overlaps(s, a->guard_begin, a->guard_end)) continue;
    r.allocation = *a;
    r.certain = !a->freed || !a->quarantine_released;
    if (a->side == FenceSide::back) set_past_end(r, *a, s, a->guard_begin);
    else set_before_start(r, *a, s, a->guard_end);
    return true;
  }
  for (const auto* a : order) {
    const std::uint64_t begin = a->freed && a->mapped_begin ? std::min(a->mapped_begin, a->address) : a->address;
    const std::uint64_t end = a->freed ? std::max(end_of(*a), a->mapped_end) : end_of(*a);
    if (!overlaps(s, begin, end)) continue;
    r.allocation = *a;
    r.relation = a->freed ? Relation::use_after_free : Relation::inside_live;
    r.certain = a->freed ? !a->quarantine_released : true;
    if (s.lo >= a->address) r.distance_min = r.distance_max = 0;
    return true;
  }
  // The slack between a back-fenced buffer's end and its guard is mapped: a fault there
  // cannot happen, but a sanitizer address can point into it.
  for (const auto* a : order) {
    if (a->side != FenceSide::back || a->freed || !overlaps(s, end_of(*a), a->guard_begin)) continue;
    r.allocation = *a;
    r.certain = false;
    set_past_end(r, *a, s, end_of(*a));
    return true;
  }
  return false;
}

// Nearest live allocation within kNearestWindow: one that ends before the fault, or one
// that starts after it.
bool locate_nearest(const InterposerLog& log, Span s, Attribution& r) {
  const AllocationRecord* best = nullptr;
  std::uint64_t best_gap = kNearestWindow + 1;
  bool best_after = false;
  for (const auto& a : log.allocations) {
    if (a.freed) continue;
    if (end_of(a) <= s.lo && s.lo - end_of(a) < best_gap) {
      best = &a;
      best_gap = s.lo - end_of(a);
      best_after = true;
    } else if (a.address >= s.hi && a.address - (s.hi - 1) < best_gap) {
      best = &a;
      best_gap = a.address - (s.hi - 1);
      best_after = false;
    }
  }
  if (!best || best_gap > kNearestWindow) return false;
  r.allocation = *best;
  r.certain = false;
  if (best_after) set_past_end(r, *best, s, s.lo);
  else set_before_start(r, *best, s, s.hi);
  return true;
}

void pick_suspect(const InterposerLog& log, Attribution& r) {
  const std::size_t n = log.launches.size();
  const std::size_t first = n > kLastLaunches ? n - kLastLaunches : 0;
  r.last_launches.assign(log.launches.begin() + static_cast<std::ptrdiff_t>(first), log.launches.end());
  if (log.launches.empty()) return;
  if (r.allocation) {
    for (auto it = log.launches.rbegin(); it != log.launches.rend(); ++it) {
      for (const auto p : it->pointer_args) {
        if (owns_pointer(*r.allocation, p)) {
          r.suspect = *it;
          r.suspect_uses_allocation = true;
          return;
        }
      }
    }
  }
  r.suspect = log.launches.back();
}

std::string allocation_text(const AllocationRecord& a) {
  std::string side = a.side == FenceSide::back    ? "fenced at its end"
                     : a.side == FenceSide::front ? "fenced at its start"
                                                  : "not fenced";
  const std::string origin = mapping_origin_text(a);
  return fmt::format("allocation #{} ({} bytes at {:#x} from {}, {}{}{})", a.seq, a.bytes, a.address,
                     a.api.empty() ? "an unknown call" : a.api, side, a.freed ? ", freed" : "",
                     origin.empty() ? std::string() : "; " + origin);
}

std::string suspect_text(const Attribution& r) {
  if (!r.suspect) return "no launch was recorded";
  return fmt::format("kernel {} (launch #{}){}", r.suspect->kernel.empty() ? "?" : r.suspect->kernel, r.suspect->seq,
                     r.suspect_uses_allocation ? " was passed this allocation"
                                               : " was the newest launch (none recorded was passed this allocation)");
}

std::string make_summary(const Attribution& r) {
  const std::string owner = r.names_owner ? owner_text(r) : std::string();
  const std::string in = owner.empty() ? std::string() : " in " + owner;
  if (!r.fault_address) return "no faulting address" + in + "; the newest launch: " + suspect_text(r);
  const std::string at = fmt::format("the fault at {:#x}{}{}", *r.fault_address,
                                     r.precision == AddressPrecision::page ? " (page)" : "", in);
  if (!r.allocation) {
    if (*r.fault_address < kNullPage) return at + " is a null pointer dereference; " + suspect_text(r);
    return at + " is near no recorded allocation; " + suspect_text(r);
  }
  std::string where;
  switch (r.relation) {
    case Relation::past_end:
    case Relation::before_start: where = "is " + describe_distance(r) + " of "; break;
    case Relation::use_after_free: where = "is inside the freed "; break;
    case Relation::inside_live: where = "is inside the live "; break;
    case Relation::unknown: where = "is near "; break;
  }
  const bool page_range = (r.relation == Relation::past_end || r.relation == Relation::before_start) &&
                          r.distance_min != r.distance_max;
  return at + " " + where + allocation_text(*r.allocation) + (r.certain ? "" : " (nearest allocation, not a guard)") +
         (page_range ? " (the Xid names the faulting 4 KiB page, not the byte)" : "") + "; " + suspect_text(r);
}

// Who the log belongs to, and on which GPU the fault's allocation (else its launch) lived.
void name_owner(const InterposerLog& log, Attribution& r) {
  if (log.process.recorded || log.process.pid > 0) r.process = log.process;
  int device = r.allocation ? r.allocation->device : -1;
  if (device < 0 && r.suspect) device = r.suspect->device;
  if (device >= 0) {
    r.device = device;
    for (const auto& d : log.devices)
      if (d.ordinal == device) r.gpu = d;
  }
  r.names_owner = log.processes_recorded > 1 || log.process.rank >= 0 || log.devices.size() > 1;
}

}  // namespace

std::string owner_text(const std::optional<ProcessIdentity>& process, std::optional<int> device,
                       const std::optional<DeviceIdentity>& gpu) {
  std::string who;
  if (process && process->rank >= 0 && process->pid > 0) who = fmt::format("rank {} (pid {})", process->rank, process->pid);
  else if (process && process->rank >= 0) who = fmt::format("rank {}", process->rank);
  else if (process && process->pid > 0) who = fmt::format("pid {}", process->pid);
  const int ordinal = device ? *device : gpu ? gpu->ordinal : -1;
  if (ordinal < 0) return who;
  std::string where = fmt::format("GPU {}", ordinal);
  if (gpu && !gpu->pci_bus_id.empty()) where += " (" + gpu->pci_bus_id + ")";
  return who.empty() ? where : who + " on " + where;
}

std::string owner_text(const Attribution& a) { return owner_text(a.process, a.device, a.gpu); }

void refresh_summary(Attribution& a) { a.summary = make_summary(a); }

const char* to_string(Relation r) {
  switch (r) {
    case Relation::past_end: return "past_end";
    case Relation::before_start: return "before_start";
    case Relation::use_after_free: return "use_after_free";
    case Relation::inside_live: return "inside_live";
    case Relation::unknown: break;
  }
  return "unknown";
}

std::string describe_distance(const Attribution& a) {
  const char* side = a.relation == Relation::before_start ? "before the start" : "past the end";
  if (a.distance_min == a.distance_max) return fmt::format("{} bytes {}", a.distance_min, side);
  return fmt::format("between {} and {} bytes {}", a.distance_min, a.distance_max, side);
}

Attribution attribute_fault(const InterposerLog& log, std::optional<std::uint64_t> address,
                            AddressPrecision precision) {
  Attribution r;
  r.fault_address = address;
  r.precision = precision;
  if (address && *address >= kNullPage) {
    const std::uint64_t width = precision == AddressPrecision::page ? host::kMmuFaultGranularity : 1;
    const Span s{*address, *address > UINT64_MAX - width ? UINT64_MAX : *address + width};
    if (!locate_in_ranges(log, s, r)) locate_nearest(log, s, r);
  }
  pick_suspect(log, r);
  name_owner(log, r);
  r.summary = make_summary(r);
  return r;
}

FenceEffect fence_effective(const InterposerSummary& s) {
  FenceEffect e;
  if (!s.loaded) {
    e.reason = "the interposer was not loaded in the program (LD_PRELOAD ignored: a static or setuid binary, or "
               "a launcher that cleared the environment)";
  } else if (!s.cuda_seen) {
    e.cuda_unused = true;
    e.reason = "the program never resolved a CUDA driver entry point through the interposer: it did not use CUDA "
               "(or only through a library loaded with RTLD_DEEPBIND, which the interposer cannot see), nothing to fence";
  } else if (s.allocations == 0) {
    e.reason = "no device allocation went through the interposer: the program allocates in a way it does not see";
  } else if (s.fenced == 0) {
    e.reason = fmt::format("none of the {} device allocations could be fenced", s.allocations);
  } else if (s.fenced <= kFewFenced && s.launches >= kManyLaunches && s.launches >= kLaunchesPerFenced * s.fenced) {
    e.reason = fmt::format(
        "only {} of {} allocations were fenced against {} launches: the program probably sub-allocates from a pool "
        "(caching allocator, RMM, XLA's BFC) that the fence sees as one slab",
        s.fenced, s.allocations, s.launches);
  } else {
    e.effective = true;
    e.reason = fmt::format("{} of {} allocations fenced, {} launches", s.fenced, s.allocations, s.launches);
  }
  return e;
}

namespace {

// Distinct pointer arguments of the kept launches that lie in a fenced buffer: at its first
// byte, or inside it.
struct PointerUse {
  std::size_t at_start = 0;
  std::size_t inside = 0;
};

PointerUse pointer_use(const InterposerLog& log) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fenced;  // [address, end)
  for (const auto& a : log.allocations)
    if (a.side != FenceSide::none) fenced.emplace_back(a.address, a.address + std::max<std::uint64_t>(a.bytes, 1));
  std::sort(fenced.begin(), fenced.end());
  std::vector<std::uint64_t> starts, insides;
  for (const auto& l : log.launches)
    for (const std::uint64_t p : l.pointer_args) {
      auto it = std::upper_bound(fenced.begin(), fenced.end(), std::make_pair(p, UINT64_MAX));
      if (it == fenced.begin()) continue;
      --it;
      if (p >= it->second) continue;
      (p == it->first ? starts : insides).push_back(p);
    }
  for (auto* v : {&starts, &insides}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return {starts.size(), insides.size()};
}

}  // namespace

FenceEffect fence_effective(const InterposerLog& log) {
  FenceEffect e = fence_effective(log.summary);
  const InterposerSummary& s = log.summary;
  if (e.effective || !s.loaded || !s.cuda_seen || s.fenced == 0 || s.fenced > kFewFenced) return e;
  const PointerUse use = pointer_use(log);
  if (use.at_start == 0 || use.inside > use.at_start) return e;
  e.effective = true;
  e.reason = fmt::format("{} of {} allocations fenced, {} launches (on the buffers' own first bytes: no pool)", s.fenced,
                         s.allocations, s.launches);
  return e;
}

std::optional<std::string> fence_suspicion(const InterposerSummary& s, const Attribution& a) {
  // The interposer checks every encode's base against the guards (tma_near_guard): a
  // descriptor with 128 KiB mapped after its base cannot reach a guard that way.
  if (s.tma_encodes == 0 || s.tma_near_guard == 0) return std::nullopt;
  const bool near_guard = (a.relation == Relation::past_end || a.relation == Relation::before_start) &&
                          a.distance_min < kTmaOutOfBoundsReach;
  if (!near_guard && a.relation != Relation::unknown) return std::nullopt;
  return fmt::format(
      "the program encoded {} TMA descriptor(s) (cuTensorMapEncode*), {} with its base less than 128 KiB before "
      "a fence guard: TMA's out-of-bounds handling in its 128 KiB address mode may touch the guard: possibly the "
      "fence, not the program",
      s.tma_encodes, s.tma_near_guard);
}

}  // namespace cudadiag::run

#include "run/site_evidence.h"

#include <fmt/format.h>

#include "coredump/fault_address.h"
#include "run/symbolizer.h"

namespace cudadiag::run {


const report::FaultSite* waiting_site(const std::vector<report::FaultSite>& sites) {
  for (const auto& s : sites)
    if (s.unreadable.empty() && s.exception.empty() && (!s.waiting.empty() || !s.kernel.empty())) return &s;
  return nullptr;
}

std::optional<std::uint64_t> proven_address(const std::vector<report::FaultSite>& sites) {
  const auto* s = exception_site(sites);
  if (!s || s->address_status != report::AddressStatus::proven) return std::nullopt;
  return s->address;
}

std::string placement_text(const Attribution& a) {
  if (!a.fault_address || a.precision != AddressPrecision::exact) return "";
  if (!a.allocation) return *a.fault_address < kNullPage ? "a null pointer dereference" : "";
  const auto& al = *a.allocation;
  const std::string what = fmt::format("allocation #{} ({} bytes)", al.seq, al.bytes);
  std::string t;
  switch (a.relation) {
    case Relation::past_end: t = fmt::format("{} bytes past the end of {}", a.distance_min, what); break;
    case Relation::before_start: t = fmt::format("{} bytes before the start of {}", a.distance_min, what); break;
    case Relation::use_after_free:
      t = *a.fault_address >= al.address
              ? fmt::format("{} bytes into {}, freed before the launch", *a.fault_address - al.address, what)
              : fmt::format("{} bytes before the start of {}, freed before the launch", al.address - *a.fault_address, what);
      break;
    case Relation::inside_live: t = fmt::format("{} bytes into live {}", *a.fault_address - al.address, what); break;
    case Relation::unknown: return "";
  }
  if (!a.certain) t += " (nearest allocation, not a guard)";
  return t;
}

std::vector<std::string> place_sites(std::vector<report::FaultSite>& sites, const InterposerLog* log,
                                     const std::optional<host::MmuFault>& xid_fault) {
  std::vector<std::string> lines;
  std::optional<Symbolizer> symbols;
  if (log) symbols.emplace(log->modules);
  for (auto& s : sites) {
    if (!s.unreadable.empty() || s.address_status != report::AddressStatus::proven || !s.address) continue;
    if (log) {
      Attribution a = attribute_fault(*log, *s.address, AddressPrecision::exact);
      // A warp's exception does not name the lane that faulted: the first lane's address
      // may be a valid one. The faulting lane is one whose address lies outside every live
      // allocation (a guard, a freed range, nowhere known).
      if (a.relation == Relation::inside_live) {
        for (const auto& lane : s.lane_addresses) {
          Attribution la = attribute_fault(*log, lane.address, AddressPrecision::exact);
          if (la.relation == Relation::inside_live) continue;
          s.notes.push_back(fmt::format(
              "the exception is the warp's: its first lane, thread {}, accessed {:#x}, inside a live allocation; "
              "thread {} is the first lane whose address lies outside every live allocation",
              s.thread ? report::triple_text(*s.thread) : std::string("?"), *s.address, report::triple_text(lane.thread)));
          s.block = lane.block;
          s.thread = lane.thread;
          s.address = lane.address;
          s.alignment = coredump::alignment_of(lane.address);
          a = la;
          break;
        }
        if (a.relation == Relation::inside_live && s.lane_addresses.size() > 1)
          s.notes.push_back(
              "every lane's proven address lies inside a live allocation: the address shown is the first lane's, "
              "not necessarily the faulting one");
      }
      s.placement = placement_text(a);
      if (a.allocation && !s.placement.empty()) s.allocated_at = allocation_origin(*log, *a.allocation, *symbols);
    }
    if (xid_fault) {
      const std::uint64_t page = xid_fault->address;
      if (*s.address < page || *s.address - page >= host::kMmuFaultGranularity) {
        const std::string line = fmt::format(
            "the kernel log and the core dump disagree: the Xid 31 names the page at {:#x}, the dump proves the "
            "address {:#x}",
            page, *s.address);
        s.notes.push_back(line);
        lines.push_back(line);
      }
    }
  }
  return lines;
}

}  // namespace cudadiag::run

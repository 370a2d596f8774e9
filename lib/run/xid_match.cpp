#include "run/xid_match.h"

#include <algorithm>

#include "host/pci_bus_id.h"

namespace cudadiag::run {
namespace {

bool faulting_xid(const host::XidEvent& x) { return x.xid == 13 || x.xid == 31 || x.xid == 43; }

// A later Xid replaces the chosen one only when it is an Xid 31 with an address and the
// chosen one is not.
bool better(const host::XidEvent& candidate, const host::XidEvent& chosen) {
  const auto rank = [](const host::XidEvent& x) { return x.xid == 31 ? (x.mmu_fault ? 2 : 1) : 0; };
  return rank(candidate) > rank(chosen);
}

std::optional<std::size_t> ring_of(const FenceRecords& records, int pid) {
  for (std::size_t i = 0; i < records.rings.size(); ++i) {
    const RingRead& r = records.rings[i].read;
    if (r.readable() && r.owner_pid == pid) return i;
  }
  return std::nullopt;
}

void fill_from_ring(FaultingProcess& f, const FenceRecords& records, std::size_t ring) {
  const InterposerLog& log = records.rings[ring].read.log;
  f.ring = ring;
  f.process = log.process;
  if (const DeviceIdentity* d = device_on_bus(log, f.xid.pci)) f.gpu = *d;
}

}  // namespace

const DeviceIdentity* device_on_bus(const InterposerLog& log, const std::string& pci) {
  for (const auto& d : log.devices)
    if (host::same_pci_device(d.pci_bus_id, pci)) return &d;
  return nullptr;
}

std::vector<FaultingProcess> match_faulting_processes(const std::vector<host::XidEvent>& xid,
                                                      const FenceRecords* records) {
  std::vector<FaultingProcess> out;
  // With a pid: one entry per pid.
  for (const auto& x : xid) {
    if (!faulting_xid(x) || !x.pid) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const FaultingProcess& f) { return f.pid == x.pid; });
    if (it == out.end()) {
      FaultingProcess f;
      f.xid = x;
      f.pid = x.pid;
      out.push_back(std::move(f));
    } else if (better(x, it->xid)) {
      it->xid = x;
    }
  }
  if (records)
    for (auto& f : out)
      if (const auto ring = ring_of(*records, *f.pid)) fill_from_ring(f, *records, *ring);
  if (!records) return out;
  // Without a pid: the one process that used the GPU on that bus, unless it has its own.
  std::vector<FaultingProcess> by_bus;
  for (const auto& x : xid) {
    if (!faulting_xid(x) || x.pid) continue;
    std::optional<std::size_t> only;
    int users = 0;
    for (std::size_t i = 0; i < records->rings.size(); ++i) {
      const RingRead& r = records->rings[i].read;
      if (!r.readable() || r.owner_pid <= 0 || !device_on_bus(r.log, x.pci)) continue;
      ++users;
      only = i;
    }
    if (users != 1) continue;
    const int pid = records->rings[*only].read.owner_pid;
    if (std::any_of(out.begin(), out.end(), [&](const FaultingProcess& f) { return f.pid == pid; })) continue;
    auto it = std::find_if(by_bus.begin(), by_bus.end(), [&](const FaultingProcess& f) { return f.pid == pid; });
    if (it != by_bus.end()) {
      if (better(x, it->xid)) it->xid = x;
      continue;
    }
    FaultingProcess f;
    f.xid = x;
    f.pid = pid;
    fill_from_ring(f, *records, *only);
    by_bus.push_back(std::move(f));
  }
  for (auto& f : by_bus) out.push_back(std::move(f));
  return out;
}

const FaultingProcess* primary_fault(const std::vector<FaultingProcess>& faults) {
  for (const auto& f : faults)
    if (f.xid.mmu_fault) return &f;
  return faults.empty() ? nullptr : &faults.front();
}

MatchedRings match_rings(const std::vector<host::XidEvent>& xid, const FenceRecords& records) {
  MatchedRings out;
  out.faults = match_faulting_processes(xid, &records);
  const FaultingProcess* primary = primary_fault(out.faults);
  auto judged = log_for_judging(records, primary ? primary->pid : std::nullopt);
  out.log = std::move(judged.log);
  out.error = std::move(judged.error);
  for (auto& f : out.faults)
    if (&f != primary && f.ring) f.log = process_log(records, *f.ring);
  return out;
}

}  // namespace cudadiag::run

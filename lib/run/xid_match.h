#pragma once
// The processes a run's kernel-log Xid lines say faulted, each matched once to what the
// interposer recorded: the pid of an Xid 13, 31 or 43 names the process (the ring it
// owns), the line's PCI bus id names the GPU (that ring's device on the same bus). One Xid
// is chosen per process, so that with two faulting ranks each rank's faulting address is
// matched against its own allocations only, never the other rank's.
// Pure: plain data in, plain data out.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "host/xid.h"
#include "run/allocation.h"
#include "run/fence_records.h"

namespace cudadiag::run {

struct FaultingProcess {
  // Its first Xid 31 with a faulting address, else its first Xid 31, 13 or 43.
  host::XidEvent xid;
  std::optional<int> pid;                  // the Xid's, else the one process that used its GPU
                                           //   (none: an old driver's line, '<unknown>')
  std::optional<std::size_t> ring;         // index into FenceRecords::rings of the ring it owns
  std::optional<ProcessIdentity> process;  // that ring's owner, as it recorded itself
  std::optional<DeviceIdentity> gpu;       // the ring's device on the Xid's PCI bus
  // Its own allocations and launches, for every faulting process but the first (whose log
  // is the run's, RunObservation::interposer); filled by the session.
  std::optional<InterposerLog> log;
};

// The faulting processes: those an Xid names by pid in the order of their first Xid, then
// those found by bus alone. An Xid without a pid
// belongs to the one process whose ring recorded a device on its bus (it is left out when
// none or several did, or when that process has an Xid of its own). `records` may be null
// (no fence rung): the processes are then named by pid alone.
std::vector<FaultingProcess> match_faulting_processes(const std::vector<host::XidEvent>& xid,
                                                      const FenceRecords* records);

// The fault a run is judged by: the first faulting process whose Xid names an address,
// else the first one; null when none.
const FaultingProcess* primary_fault(const std::vector<FaultingProcess>& faults);

// What the judge gets of a fenced run's rings, each faulting process matched once: the
// run's log is the first fault's process's (log_for_judging), and every other faulting
// process that recorded carries its own log (process_log).
struct MatchedRings {
  std::optional<InterposerLog> log;
  std::string error;
  std::vector<FaultingProcess> faults;
};
MatchedRings match_rings(const std::vector<host::XidEvent>& xid, const FenceRecords& records);

// The device `ring` recorded on `pci` (the kernel log's "0000:3b:00" against the
// driver's "0000:3B:00.0"); null when none.
const DeviceIdentity* device_on_bus(const InterposerLog& log, const std::string& pci);

}  // namespace cudadiag::run

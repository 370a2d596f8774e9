#include "run/fence_records.h"

#include <algorithm>

namespace cudadiag::run {
namespace {

void add_counts(InterposerSummary& into, const InterposerSummary& s) {
  into.loaded = into.loaded || s.loaded;
  into.cuda_seen = into.cuda_seen || s.cuda_seen;
  into.allocations += s.allocations;
  into.fenced += s.fenced;
  into.frees += s.frees;
  into.launches += s.launches;
  into.quarantined_bytes += s.quarantined_bytes;
  into.tma_encodes += s.tma_encodes;
  into.dropped_allocations += s.dropped_allocations;
  into.dropped_launches += s.dropped_launches;
  if (into.side == FenceSide::none) into.side = s.side;
  into.quarantine_limit_bytes = std::max(into.quarantine_limit_bytes, s.quarantine_limit_bytes);
  into.recycle_limit_bytes = std::max(into.recycle_limit_bytes, s.recycle_limit_bytes);
  into.recycled += s.recycled;
  into.slack_watched = into.slack_watched || s.slack_watched;
  into.ipc_exports += s.ipc_exports;
  into.ipc_imports += s.ipc_imports;
  into.program_mappings += s.program_mappings;
  // Every process of a run reads the same CUDADIAG_GUARD; one granule wins if any had it.
  if (s.loaded && s.guard_mode == fence::GuardMode::granule) into.guard_mode = fence::GuardMode::granule;
  if (into.granularity == 0) into.granularity = s.granularity;
  into.guard_limit_bytes = std::max(into.guard_limit_bytes, s.guard_limit_bytes);
  into.guard_total_limit_bytes = std::max(into.guard_total_limit_bytes, s.guard_total_limit_bytes);
  into.guards_cut += s.guards_cut;
  // The first process whose wait at its end failed names the error.
  if (into.end_wait_result == 0) into.end_wait_result = s.end_wait_result;
}

const AllocationRecord* record_of(const FenceRecords& records, int pid, std::uint64_t seq) {
  for (const auto& r : records.rings) {
    if (!r.read.readable() || r.read.owner_pid != pid) continue;
    for (const auto& a : r.read.log.allocations)
      if (a.seq == seq) return &a;
  }
  return nullptr;
}

}  // namespace

std::vector<int> FenceRecords::pids() const {
  std::vector<int> out;
  for (const auto& r : rings)
    if (r.read.readable() && r.read.owner_pid > 0 &&
        std::find(out.begin(), out.end(), r.read.owner_pid) == out.end())
      out.push_back(r.read.owner_pid);
  return out;
}

FenceRecords read_fence_records(const std::filesystem::path& ring_file) {
  FenceRecords out;
  out.rings.push_back(ProcessRing{ring_file, read_ring(ring_file)});
  for (auto& f : process_ring_files(ring_file)) out.rings.push_back(ProcessRing{f, read_ring(f)});
  return out;
}

void join_imports(InterposerLog& log, int importer_pid, const FenceRecords& records) {
  for (auto& a : log.allocations) {
    if (a.origin_pid == 0) continue;
    IpcImport i;
    i.importer_pid = importer_pid;
    if (const AllocationRecord* e = record_of(records, a.origin_pid, a.origin_seq)) {
      i.exporter_found = true;
      i.bytes = e->bytes;
      i.api = e->api;
      i.side = e->side;
      i.freed = e->freed;
    }
    a.import = std::move(i);
  }
}

JudgedLog log_for_judging(const FenceRecords& records, std::optional<int> faulting_pid) {
  JudgedLog out;
  const ProcessRing* chosen = nullptr;
  std::vector<std::string> unreadable;
  for (const auto& r : records.rings) {
    if (!r.read.readable()) {
      unreadable.push_back(r.read.message.empty() ? r.file.string() + ": " + ring_status_name(r.read.status)
                                                  : r.read.message);
      continue;
    }
    if (!chosen) chosen = &r;
    if (faulting_pid && r.read.owner_pid == *faulting_pid) chosen = &r;
  }
  for (const auto& u : unreadable) out.error += (out.error.empty() ? "" : "; ") + u;
  if (!chosen) return out;
  InterposerLog log = chosen->read.log;
  log.summary = InterposerSummary{};
  log.summary.fence_align = chosen->read.log.summary.fence_align;
  log.ring = RingHealth{};
  log.process_events.clear();
  log.process_events_lost = log.preloads_restored = log.escapes = 0;
  log.slack_writes.clear();
  log.slack_writes_lost = 0;
  log.ipc_failures.clear();
  log.ipc_failures_lost = 0;
  join_imports(log, chosen->read.owner_pid, records);
  for (const auto& r : records.rings) {
    if (!r.read.readable()) continue;
    const InterposerLog& l = r.read.log;
    add_counts(log.summary, l.summary);
    log.process_events.insert(log.process_events.end(), l.process_events.begin(), l.process_events.end());
    log.process_events_lost += l.process_events_lost;
    log.slack_writes.insert(log.slack_writes.end(), l.slack_writes.begin(), l.slack_writes.end());
    log.slack_writes_lost += l.slack_writes_lost;
    log.ipc_failures.insert(log.ipc_failures.end(), l.ipc_failures.begin(), l.ipc_failures.end());
    log.ipc_failures_lost += l.ipc_failures_lost;
    log.preloads_restored += l.preloads_restored;
    log.escapes += l.escapes;
    if (log.ring.no_room.empty()) log.ring.no_room = l.ring.no_room;
    log.ring.cut_short = log.ring.cut_short || l.ring.cut_short;
    log.ring.unreserved = log.ring.unreserved || l.ring.unreserved;
  }
  log.processes_recorded = static_cast<std::uint32_t>(std::max<std::size_t>(1, records.pids().size()));
  out.log = std::move(log);
  out.process = chosen->read.owner_pid;
  return out;
}

InterposerLog process_log(const FenceRecords& records, std::size_t ring) {
  const ProcessRing& r = records.rings.at(ring);
  InterposerLog log = r.read.log;
  join_imports(log, r.read.owner_pid, records);
  log.processes_recorded = static_cast<std::uint32_t>(std::max<std::size_t>(1, records.pids().size()));
  return log;
}

}  // namespace cudadiag::run

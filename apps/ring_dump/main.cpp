// cudadiag-ring-dump FILE [--records]: what the interposer recorded in a program, as
// key=value lines (for scripts and people; `cudadiag run` reads rings itself).
// Exit 0 when the ring could be read (also when cut short), 2 when it could not or on a
// usage error (cudadiag's exit-code rule). Text from the program (kernel names, program
// paths) is escaped as cudadiag escapes it (util/printable.h).
#include <CLI/CLI.hpp>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>

#include "run/ring_reader.h"
#include "run/ring_text.h"
#include "run/symbolizer.h"
#include "util/exit_codes.h"
#include "util/printable.h"

namespace {

using namespace cudadiag::run;

const char* yes_no(bool b) { return b ? "true" : "false"; }

std::string shown(const std::string& text) { return cudadiag::printable(text); }

void print_summary(const RingRead& r, std::size_t process_files) {
  const InterposerSummary& s = r.log.summary;
  std::printf("loaded=%s\ncuda_seen=%s\n", yes_no(s.loaded), yes_no(s.cuda_seen));
  std::printf("owner_pid=%d\nprocesses_loaded=%u\nother_cuda_processes=%u\nprocess_files=%zu\n", r.owner_pid,
              r.processes_loaded, r.other_cuda_processes, process_files);
  // Who recorded here, and the GPUs it used.
  if (r.log.process.recorded) std::printf("%s\n", process_line(r.log.process).c_str());
  std::printf("devices=%zu\ndevices_lost=%" PRIu64 "\n", r.log.devices.size(), r.log.devices_lost);
  for (const auto& d : r.log.devices) std::printf("%s\n", device_line(d).c_str());
  std::printf("allocations=%" PRIu64 "\nfenced=%" PRIu64 "\nfrees=%" PRIu64 "\nlaunches=%" PRIu64 "\n", s.allocations,
              s.fenced, s.frees, s.launches);
  std::printf("quarantined_bytes=%" PRIu64 "\ntma_encodes=%" PRIu64 "\ntma_near_guard=%" PRIu64 "\n",
              s.quarantined_bytes, s.tma_encodes, s.tma_near_guard);
  std::printf("dropped_allocations=%" PRIu64 "\ndropped_launches=%" PRIu64 "\ndropped_tma_maps=%" PRIu64
              "\ntorn_records=%" PRIu64 "\n",
              s.dropped_allocations, s.dropped_launches, s.dropped_tma_maps, r.torn_records);
  std::printf("fence_align=%u\nend_wait_result=%d\n", s.fence_align, s.end_wait_result);
  std::printf("guard=%s\ngranularity=%" PRIu64 "\nguard_limit_bytes=%" PRIu64 "\nguard_total_limit_bytes=%" PRIu64
              "\nguards_cut=%" PRIu64 "\n",
              s.guard_mode == cudadiag::fence::GuardMode::granule ? "granule" : "scaled", s.granularity,
              s.guard_limit_bytes, s.guard_total_limit_bytes, s.guards_cut);
  std::printf("handles_reused=%" PRIu64 "\nreservations_reused=%" PRIu64 "\n", r.handles_reused,
              r.reservations_reused);
  std::printf("recycle_limit_bytes=%" PRIu64 "\nrecycled=%" PRIu64 "\n", s.recycle_limit_bytes, s.recycled);
  std::printf("stacks_captured=%s\nsites=%zu\nsites_dropped=%" PRIu64 "\nmodules=%zu\n", yes_no(r.log.stacks_captured),
              r.log.sites.size(), r.log.sites_dropped, r.log.modules.size());
  // What the fence cost, one line per kind of driver call it made on its own behalf.
  for (const auto& c : r.driver_calls)
    std::printf("driver_call.%s=calls %" PRIu64 " total_us %.1f mean_us %.2f\n", c.name.c_str(), c.calls,
                static_cast<double>(c.nanoseconds) / 1e3,
                c.calls ? static_cast<double>(c.nanoseconds) / 1e3 / static_cast<double>(c.calls) : 0.0);
  std::map<std::string, int> unfenced;
  for (const auto& a : r.log.allocations)
    if (a.side == FenceSide::none) ++unfenced[a.unfenced_reason];
  std::string reasons;
  for (const auto& [why, n] : unfenced) reasons += (reasons.empty() ? "" : "; ") + why + ": " + std::to_string(n);
  std::printf("unfenced=%s\n", reasons.c_str());
  std::printf("slack_watched=%s\nslack_writes=%zu\nslack_writes_lost=%" PRIu64 "\n", yes_no(s.slack_watched),
              r.log.slack_writes.size(), r.log.slack_writes_lost);
  for (const auto& w : r.log.slack_writes) std::printf("%s\n", slack_write_line(w).c_str());
  std::printf("ipc_exports=%" PRIu64 "\nipc_imports=%" PRIu64 "\nprogram_mappings=%" PRIu64 "\nipc_failures=%zu\n"
              "ipc_failures_lost=%" PRIu64 "\n",
              s.ipc_exports, s.ipc_imports, s.program_mappings, r.log.ipc_failures.size(), r.log.ipc_failures_lost);
  for (const auto& f : r.log.ipc_failures) std::printf("%s\n", ipc_failure_line(f).c_str());
  std::printf("preloads_restored=%" PRIu64 "\nescapes=%" PRIu64 "\nprocess_events_lost=%" PRIu64 "\n",
              r.log.preloads_restored, r.log.escapes, r.log.process_events_lost);
  for (const auto& e : r.log.process_events)
    std::printf("process_event pid=%d escaped=%s program=%s what=%s\n", e.pid, yes_no(e.escaped),
                shown(e.program).c_str(), e.what.c_str());
  if (!r.log.ring.no_room.empty()) std::printf("ring_note=%s\n", shown(r.log.ring.no_room).c_str());
  if (r.log.launches.empty()) {
    std::printf("last_kernel=\n");
    return;
  }
  const LaunchRecord& l = r.log.launches.back();
  std::printf("last_kernel=%s\n", shown(l.kernel).c_str());
  std::printf("last_launch=grid(%u,%u,%u) block(%u,%u,%u) smem=%u stream=0x%" PRIx64 " api=%s pointer_args=%zu"
              " returned=%s\n",
              l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.dynamic_smem, l.stream,
              l.api.c_str(), l.pointer_args.size(), yes_no(l.returned));
}

void print_records(const RingRead& r) {
  Symbolizer symbols(r.log.modules);
  for (const auto& a : r.log.allocations) {
    std::printf("%s\n", allocation_line(a).c_str());
    const auto origin = allocation_origin(r.log, a, symbols);
    if (!origin.empty())
      std::printf("allocated_at seq=%" PRIu64 " %s\n", a.seq, shown(cudadiag::report::origin_text(origin)).c_str());
  }
  for (const auto& l : r.log.launches) std::printf("%s\n", launch_line(l).c_str());
  for (const auto& t : r.log.tma_maps) std::printf("%s\n", tma_map_line(t).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Print what the cudadiag interposer recorded in a program (its ring file)."};
  std::string file;
  bool records = false;
  app.add_option("file", file, "ring file (the program's CUDADIAG_RING)")->required();
  app.add_flag("--records", records, "also every allocation, launch and TMA descriptor record");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; anything else is a usage error: exit 2, as cudadiag.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : cudadiag::kExitUsage;
  }

  const RingRead r = read_ring(file);
  std::printf("file=%s\nstatus=%s\n", shown(file).c_str(), ring_status_name(r.status));
  if (!r.message.empty()) std::fprintf(stderr, "cudadiag-ring-dump: %s\n", shown(r.message).c_str());
  if (!r.readable()) {
    std::printf("loaded=%s\n", yes_no(r.log.summary.loaded));
    return cudadiag::kExitUsage;
  }
  print_summary(r, process_ring_files(file).size());
  if (records) print_records(r);
  return 0;
}

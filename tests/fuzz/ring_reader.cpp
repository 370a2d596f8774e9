// Fuzz target: ring files of the interposer, as the parent reads them after a program
// ended (the program may have written anything there). Each input is read as it is,
// and once more with its header's layout made consistent with its record counts (taken
// modulo the largest the interposer writes), so that mutations reach the record
// readers. The reader's work must stay bounded by the bytes present: scripts/fuzz.sh
// runs this target with a short time and memory limit per input.
#include <cstring>
#include <string>

#include "fuzz_target.h"
#include "fence/ring_format.h"
#include "run/ring_reader.h"

namespace {

using namespace cudadiag;

void use(const run::RingRead& r) {
  std::size_t n = r.message.size() + r.log.allocations.size() + r.log.tma_maps.size();
  for (const auto& l : r.log.launches) n += l.kernel.size();
  for (const auto& e : r.log.process_events) n += e.program.size();
  for (const auto& w : r.log.slack_writes) n += w.seen_at.size();
  for (const auto& s : r.log.sites)
    for (const auto& p : s.python) n += p.file.size() + p.function.size();
  for (const auto& m : r.log.modules) n += m.path.size();
  if (n == 1) std::memset(&n, 0, sizeof n);  // keeps the work from being optimised away
}

std::string consistent_layout(std::string bytes) {
  if (bytes.size() < sizeof(ring::Header)) return bytes;
  ring::Header h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  h.magic = ring::kMagic;
  h.version = ring::kVersion;
  h.header_bytes = ring::kHeaderBytes;
  h.allocation_slot_bytes = sizeof(ring::AllocationSlot);
  h.launch_slot_bytes = sizeof(ring::LaunchSlot);
  h.allocation_capacity = h.allocation_capacity % (ring::kMaxSlots + 1);
  h.launch_capacity = h.launch_capacity % (ring::kMaxSlots + 1);
  h.tma_capacity = h.tma_capacity % (ring::kMaxSlots + 1);
  h.names_capacity = h.names_capacity % (ring::kMaxNameBytes + 1);
  h.site_capacity = h.site_capacity % (ring::kMaxSiteSlots + 1);
  h.module_capacity = h.module_capacity % (ring::kMaxModuleSlots + 1);
  const ring::Layout l = ring::layout_for(ring::capacities_of(h));
  h.allocations_offset = l.allocations_offset;
  h.launches_offset = l.launches_offset;
  h.tma_offset = l.tma_offset;
  h.names_offset = l.names_offset;
  h.sites_offset = l.sites_offset;
  h.modules_offset = l.modules_offset;
  h.file_bytes = l.file_bytes;
  std::memcpy(bytes.data(), &h, sizeof h);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(fuzz_text(data, size));
  use(run::parse_ring(bytes, "fuzz"));
  use(run::parse_ring(consistent_layout(bytes), "fuzz"));
  return 0;
}

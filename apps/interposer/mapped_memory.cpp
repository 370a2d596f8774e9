#include "apps/interposer/mapped_memory.h"

#include "apps/interposer/alloc_site.h"
#include "apps/interposer/driver_calls.h"
#include "apps/interposer/process.h"
#include "apps/interposer/small_table.h"
#include "apps/interposer/tracked_ranges.h"

namespace cudadiag::interposer {
namespace {

struct Mapping {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  RecordRef record;
};

constinit SmallTable<Mapping> g_mappings;
SmallTable<Mapping>& mappings() { return held_across_fork<&g_mappings>(); }

}  // namespace

void note_mapping(ring::Api api, ring::Unfenced why, std::uint64_t address, std::uint64_t bytes) noexcept {
  const CallPlace where = current_place();
  Tracked t;
  t.address = address;
  t.bytes = bytes;
  t.device = where.device;
  t.api = api;
  t.kind = Tracked::Kind::unfenced;
  if (RingWriter* ring = recorder()) {
    if (api == ring::Api::cuMemMap) ring->add(&ring::Header::program_mappings, 1);
    AllocationEvent e;
    e.address = address;
    e.bytes = bytes;
    e.mapped_begin = address;
    e.mapped_end = address + bytes;
    e.api = api;
    e.side = ring::Side::none;
    e.unfenced_reason = why;
    e.context = where.context;
    e.device = where.device;
    e.site = capture_allocation_site(*ring);
    t.record = ring->add_allocation(e);
  }
  tracked_ranges().insert(t);
  mappings().add(Mapping{address, bytes, t.record});
}

void note_unmapping(ring::Api api, std::uint64_t address, std::uint64_t bytes) noexcept {
  const std::uint64_t end = address + (bytes ? bytes : 1);
  RingWriter* ring = recorder();
  mappings().remove([&](const Mapping& m) { return m.address < end && address < m.address + (m.bytes ? m.bytes : 1); },
                    [&](const Mapping& m) {
                      tracked_ranges().remove(m.address);
                      if (ring) ring->set_state(m.record, ring::State::freed_unguarded, api);
                    });
}

}  // namespace cudadiag::interposer

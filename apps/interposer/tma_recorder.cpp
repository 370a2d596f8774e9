#include "apps/interposer/tma_recorder.h"

#include "apps/interposer/process.h"
#include "apps/interposer/tma_span.h"
#include "apps/interposer/tracked_ranges.h"

namespace cudadiag::interposer {

void record_tma_encode(const TmaEncode& e, CUresult result) noexcept {
  RingWriter* ring = recorder();
  if (!ring) return;
  TmaEvent t;
  t.api = e.api;
  t.address = e.address;
  t.span_bytes = tma_span_bytes(e.data_type, e.rank, e.dims, e.strides);
  t.data_type = static_cast<std::uint8_t>(e.data_type);
  t.rank = static_cast<std::uint8_t>(e.rank);
  t.interleave = static_cast<std::uint8_t>(e.interleave);
  t.swizzle = static_cast<std::uint8_t>(e.swizzle);
  t.oob_fill = static_cast<std::uint8_t>(e.oob_fill);
  t.result = static_cast<std::int32_t>(result);
  Tracked a;
  if (e.address != 0 && tracked_ranges().containing(e.address, a)) {
    t.allocation_address = a.address;
    t.allocation_bytes = a.bytes;
    t.allocation_seq = a.record.seq;
    switch (a.kind) {
      case Tracked::Kind::fenced:
      case Tracked::Kind::imported: {
        t.flags |= ring::kTmaInFenced;
        const std::uint64_t mapped_end = a.mapped_begin + a.mapped_size;
        t.mapped_after = mapped_end > e.address ? mapped_end - e.address : 0;
        if (t.mapped_after < ring::kTmaOutOfBoundsReach) t.flags |= ring::kTmaNearGuard;
        break;
      }
      case Tracked::Kind::unfenced: t.flags |= ring::kTmaInUnfenced; break;
      case Tracked::Kind::quarantined: t.flags |= ring::kTmaInFreed; break;
    }
    if (a.kind != Tracked::Kind::quarantined && t.span_bytes != 0 &&
        saturating_add(e.address, t.span_bytes) > a.address + a.bytes)
      t.flags |= ring::kTmaPastBuffer;
  }
  ring->add_tma_map(t);
}

}  // namespace cudadiag::interposer

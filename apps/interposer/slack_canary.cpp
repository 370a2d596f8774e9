#include "apps/interposer/slack_canary.h"

#include <unistd.h>

#include "apps/interposer/process.h"

namespace cudadiag::interposer {

std::uint32_t arm_slack(const DriverCalls& d, std::uint64_t end, std::uint64_t guard_begin) noexcept {
  if (guard_begin <= end || guard_begin - end > ring::kMaxSlackBytes || !d.memset_d8 || !d.memcpy_dtoh) return 0;
  const auto n = static_cast<std::uint32_t>(guard_begin - end);
  if (d.memset_d8(end, ring::kSlackCanary, n) != CUDA_SUCCESS) return 0;
  if (RingWriter* ring = recorder()) ring->add_slack_watched();
  return n;
}

bool check_slack(const DriverCalls& d, const Tracked& t, ring::SlackCheck when) noexcept {
  if (t.slack == 0 || t.slack > ring::kMaxSlackBytes || !d.memcpy_dtoh) return true;
  unsigned char bytes[ring::kMaxSlackBytes];
  if (d.memcpy_dtoh(bytes, t.address + t.bytes, t.slack) != CUDA_SUCCESS) return true;
  std::uint32_t first = t.slack, last = 0;
  for (std::uint32_t i = 0; i < t.slack; ++i) {
    if (bytes[i] == ring::kSlackCanary) continue;
    if (first == t.slack) first = i;
    last = i;
  }
  if (first == t.slack) return true;
  if (RingWriter* ring = recorder()) {
    SlackWriteEvent e;
    e.allocation_seq = t.record.seq;
    e.address = t.address;
    e.bytes = t.bytes;
    e.first_offset = first;
    e.last_offset = last;
    e.slack_bytes = t.slack;
    e.seen_at = when;
    e.pid = static_cast<std::int32_t>(getpid());
    ring->add_slack_write(e);
  }
  return false;
}

void check_all_slack(ring::SlackCheck when) noexcept {
  const DriverCalls* d = driver_calls();
  if (!d) return;
  constexpr std::size_t kBatch = 64;
  Tracked batch[kBatch];
  for (std::size_t from = 0;; from += kBatch) {
    const std::size_t n = tracked_ranges().with_slack(batch, from, kBatch);
    for (std::size_t i = 0; i < n; ++i) check_slack(*d, batch[i], when);
    if (n < kBatch) break;
  }
}

}  // namespace cudadiag::interposer

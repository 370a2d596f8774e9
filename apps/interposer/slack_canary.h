#pragma once
// Canaries in the alignment slack of buffers fenced at their end: the bytes between a
// buffer's end and its guard (a 2,002-byte buffer at 16-byte alignment leaves 14) are
// mapped, so a write there never faults. They are filled with ring::kSlackCanary when the
// buffer is placed (the driver's cuMemsetD8; the interposer has no CUDA runtime) and read
// back (cuMemcpyDtoH) when it is freed, after the wait the free does anyway, and at exit;
// a changed byte is recorded in the ring as a slack write. A read of the slack leaves no
// trace: it stays unseen.
#include <cstdint>

#include "apps/interposer/driver_calls.h"
#include "apps/interposer/tracked_ranges.h"
#include "fence/ring_format.h"

namespace cudadiag::interposer {

// Fills [end, guard_begin) with canaries; the bytes watched (0: none: no slack, more than
// ring::kMaxSlackBytes, or the driver lacks cuMemsetD8/cuMemcpyDtoH, or the memset failed).
std::uint32_t arm_slack(const DriverCalls& d, std::uint64_t end, std::uint64_t guard_begin) noexcept;

// Reads t's slack back; a changed byte is recorded as a slack write seen `when`.
// True when the canaries were intact (or could not be read).
bool check_slack(const DriverCalls& d, const Tracked& t, ring::SlackCheck when) noexcept;

// Every live buffer with canaries (at exit).
void check_all_slack(ring::SlackCheck when) noexcept;

}  // namespace cudadiag::interposer

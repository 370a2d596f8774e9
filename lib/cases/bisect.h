#pragma once
// Fault bisection: a case faulted with every buffer fenced; which buffer, and which end?
//
// The probe re-runs the case with the fence on `fenced` only (every other buffer
// direct, where a small overrun is silent) and says whether it faulted. The search:
//   1. control: nothing fenced. A fault here does not come from an overrun of a
//      cudadiag buffer (a wild pointer, say): stop, nothing found.
//   2. binary search over the buffer list with the case's fence allocator, keeping the
//      half that faults (the other half is probed when the first does not fault, so a
//      fault that needs both halves is reported as not found rather than misattributed).
//   3. the found buffer alone with the other fence side: faulting there too means both
//      ends are touched (or the buffer is used after it was freed): direction "unknown".
// Pure logic: tests drive it with a fake probe.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "profiles/allocator.h"
#include "report/report.h"

namespace cudadiag::cases {

using FaultProbe = std::function<bool(const std::vector<std::string>& fenced, profiles::Allocator allocator)>;

struct Bisection {
  bool found = false;
  std::string name;
  unsigned long long bytes = 0;  // filled by the caller from the child's buffer list
  report::BufferDirection direction = report::BufferDirection::unknown;  // unknown: faults on both sides
  int extra_runs = 0;            // probes made
  std::string note;              // why nothing was found, or what "unknown" may mean
};

// `allocator` is the fence side the case faulted under (fence-back or fence-front).
// Throws std::invalid_argument for another allocator.
Bisection bisect(const std::vector<std::string>& buffers, profiles::Allocator allocator,
                      const FaultProbe& faults);

// Same, for a case that faulted under fence-back.
Bisection bisect(const std::vector<std::string>& buffers, const FaultProbe& faults);

// result.faulting_buffer: {name, bytes, direction, extra_runs} when found, else null.
std::optional<report::FaultingBuffer> reported_buffer(const Bisection& f);
// result.details.bisection: {found, extra_runs, buffer?, note?}, found or not.
report::Fields bisection_fields(const Bisection& f);

}  // namespace cudadiag::cases

#include "cases/bisect.h"

#include <stdexcept>

namespace cudadiag::cases {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

report::BufferDirection direction_of(profiles::Allocator allocator) {
  return allocator == profiles::Allocator::fence_back ? report::BufferDirection::end_overrun
                                                      : report::BufferDirection::start_underrun;
}

}  // namespace

Bisection bisect(const std::vector<std::string>& buffers, profiles::Allocator allocator,
                      const FaultProbe& faults) {
  if (!profiles::is_fence(allocator))
    throw std::invalid_argument("bisect: allocator must be fence-back or fence-front, not '" +
                                std::string(profiles::to_string(allocator)) + "'");
  Bisection out;
  auto probe = [&](const std::vector<std::string>& fenced, profiles::Allocator alloc) {
    ++out.extra_runs;
    return faults(fenced, alloc);
  };
  if (buffers.empty()) {
    out.note = "the case allocated no buffers";
    return out;
  }
  if (probe({}, allocator)) {
    out.note = "the case faults with no buffer fenced: the access is not an overrun of one of its buffers";
    return out;
  }

  std::vector<std::string> candidates = buffers;
  bool confirmed = false;  // the single remaining candidate faulted on its own
  while (candidates.size() > 1) {
    const auto mid = candidates.begin() + static_cast<std::ptrdiff_t>(candidates.size() / 2);
    std::vector<std::string> first(candidates.begin(), mid);
    std::vector<std::string> second(mid, candidates.end());
    if (probe(first, allocator)) {
      candidates = std::move(first);
      confirmed = true;
    } else if (probe(second, allocator)) {
      candidates = std::move(second);
      confirmed = true;
    } else {
      out.note = "neither half of {" + join(candidates) + "} faults on its own: the fault needs several fenced buffers, or it is intermittent";
      return out;
    }
  }
  if (!confirmed && !probe(candidates, allocator)) {
    out.note = "buffer '" + candidates.front() + "' alone does not fault: the fault is intermittent";
    return out;
  }

  out.found = true;
  out.name = candidates.front();
  if (probe(candidates, profiles::other_fence(allocator))) {
    out.direction = report::BufferDirection::unknown;
    out.note = "faults with the guard on either side: accesses past both ends, or a use after free";
  } else {
    out.direction = direction_of(allocator);
  }
  return out;
}

Bisection bisect(const std::vector<std::string>& buffers, const FaultProbe& faults) {
  return bisect(buffers, profiles::Allocator::fence_back, faults);
}

std::optional<report::FaultingBuffer> reported_buffer(const Bisection& f) {
  if (!f.found) return std::nullopt;
  return report::FaultingBuffer{f.name, f.bytes, f.direction, f.extra_runs};
}

report::Fields bisection_fields(const Bisection& f) {
  report::Fields d{{"found", f.found}, {"extra_runs", f.extra_runs}};
  if (f.found) d.set("buffer", f.name);
  if (!f.note.empty()) d.set("note", f.note);
  return d;
}

}  // namespace cudadiag::cases

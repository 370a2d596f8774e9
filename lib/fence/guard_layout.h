#pragma once
// Guard-page arithmetic of a fenced buffer, shared by the bundled fence allocator
// (kernels/runtime/fence_allocator.cu) and the interposer (apps/interposer): how much
// to map for a request, where the pointer goes so that the buffer ends (or starts) flush
// against an unmapped guard granule, and where an address lies relative to the buffer.
// Pure constexpr C++17 (nvcc compiles one of its users), no CUDA, no library.
//
// Reservation of a back-fenced buffer (front is the mirror image):
//
//   reserved_begin                                   guard_begin         guard_end
//   | mapped: whole granules                          | one granule,      |
//   |                 [address ........ end) [slack)  | never mapped      |
//
// `slack` is the mapped space between the buffer's end and the guard: the request
// rounded up to the pointer alignment leaves it (at most alignment - 1 bytes). An
// overrun that stays inside the slack does not fault.
#include <cstdint>

namespace cudadiag::fence {

// Where the guard of a fenced allocation sits. The values are the ring format's
// (lib/fence/ring_format.h stores them in a byte).
enum class Side : std::uint8_t {
  back = 0,   // the buffer ends at the guard: an overrun faults
  front = 1,  // the buffer starts right after the guard: an underrun faults
  none = 2,   // not fenced: handed to the driver's own allocator
};

constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t m) { return (v + m - 1) / m * m; }
constexpr std::uint64_t round_down(std::uint64_t v, std::uint64_t m) { return v / m * m; }
constexpr bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Alignment and granularity the functions below accept: both powers of two, the alignment
// no larger than a granule (a reservation starts on a granule boundary).
constexpr bool valid_geometry(std::uint64_t granularity, std::uint64_t align) {
  return is_power_of_two(granularity) && is_power_of_two(align) && align <= granularity;
}

// Bytes to map for a request: the request rounded up to the pointer alignment, at least one
// byte, in whole granules.
constexpr std::uint64_t mapped_size(std::uint64_t bytes, std::uint64_t granularity, std::uint64_t align) {
  const std::uint64_t aligned = round_up(bytes, align);
  return round_up(aligned == 0 ? 1 : aligned, granularity);
}

// Address space to reserve: the mapping plus one guard granule that is never mapped.
constexpr std::uint64_t reserved_size(std::uint64_t mapped, std::uint64_t granularity) {
  return mapped + granularity;
}

struct Layout {
  std::uint64_t reserved_begin = 0;
  std::uint64_t reserved_size = 0;
  std::uint64_t mapped_begin = 0;
  std::uint64_t mapped_size = 0;
  std::uint64_t guard_begin = 0;  // [guard_begin, guard_end): reserved, never mapped
  std::uint64_t guard_end = 0;
  std::uint64_t address = 0;      // pointer handed out
  std::uint64_t bytes = 0;        // bytes requested
  std::uint64_t slack = 0;        // mapped bytes between the buffer and its guard

  constexpr std::uint64_t end() const { return address + bytes; }
  constexpr std::uint64_t mapped_end() const { return mapped_begin + mapped_size; }
};

// Placement of a request inside a reservation that starts at `reserved_begin` (granule
// aligned, reserved_size(mapped_size(...)) bytes long). Requires valid_geometry().
constexpr Layout place(std::uint64_t reserved_begin, std::uint64_t bytes, std::uint64_t granularity,
                       std::uint64_t align, Side side) {
  Layout l;
  l.reserved_begin = reserved_begin;
  l.mapped_size = mapped_size(bytes, granularity, align);
  l.reserved_size = reserved_size(l.mapped_size, granularity);
  l.bytes = bytes;
  if (side == Side::front) {
    l.guard_begin = reserved_begin;
    l.guard_end = reserved_begin + granularity;
    l.mapped_begin = l.guard_end;
    l.address = l.mapped_begin;  // first byte right after the guard
    l.slack = 0;
  } else {
    l.mapped_begin = reserved_begin;
    l.guard_begin = l.mapped_end();
    l.guard_end = l.guard_begin + granularity;
    l.address = l.mapped_end() - round_up(bytes, align);  // the last aligned block ends at the guard
    l.slack = l.mapped_end() - l.end();
  }
  return l;
}

// Where an address lies relative to a buffer [begin, begin + bytes).
enum class Where : std::uint8_t {
  inside,
  past_end,      // at or after the end
  before_start,  // before the first byte
};

struct Position {
  Where where = Where::inside;
  // inside: offset from the first byte (0-based).
  // past_end: the distance-th byte after the last one (the first byte past the end is 1).
  // before_start: the distance-th byte before the first one (the byte just before is 1).
  std::uint64_t distance = 0;
  bool in_guard = false;  // the address falls in the buffer's unmapped guard
};

constexpr Position locate(std::uint64_t begin, std::uint64_t bytes, std::uint64_t guard_begin,
                          std::uint64_t guard_end, std::uint64_t addr) {
  Position p;
  p.in_guard = guard_begin < guard_end && addr >= guard_begin && addr < guard_end;
  if (addr < begin) {
    p.where = Where::before_start;
    p.distance = begin - addr;
  } else if (addr - begin >= bytes) {
    p.where = Where::past_end;
    p.distance = addr - (begin + bytes) + 1;
  } else {
    p.where = Where::inside;
    p.distance = addr - begin;
  }
  return p;
}

constexpr Position locate(const Layout& l, std::uint64_t addr) {
  return locate(l.address, l.bytes, l.guard_begin, l.guard_end, addr);
}

}  // namespace cudadiag::fence

#pragma once
// Guard-page arithmetic of a fenced buffer, shared by the bundled fence allocator
// (kernels/runtime/fence_allocator.cu) and the interposer (apps/interposer): how much
// to map for a request, how large its unmapped guard is, where the pointer goes so that
// the buffer ends (or starts) flush against the guard, and where an address lies
// relative to the buffer. Pure constexpr C++17 (nvcc compiles one of its users), no CUDA,
// no library.
//
// Reservation of a back-fenced buffer (front is the mirror image):
//
//   reserved_begin                                   guard_begin                 guard_end
//   | mapped: whole granules                          | as large as the mapping,  |
//   |                 [address ........ end) [slack)  | never mapped              |
//
// `slack` is the mapped space between the buffer's end and the guard: the request
// rounded up to the pointer alignment leaves it (at most alignment - 1 bytes). An
// overrun that stays inside the slack does not fault.
//
// Why the guard scales with the buffer: the next reservation may be mapped right behind
// a guard, so an access that jumps the guard lands in another buffer and stays silent.
// Overruns of gathers with a bad index, strided views and dilated indices are far, not
// one element: a ring-attention gather read rows 2 to 4 MB past a 4 MB chunk, over a
// one-granule (2 MiB) guard. A guard as large as the mapping makes every access up to
// the buffer's own size past its end (before its start, fenced at the front) fault. The
// guard is reserved address space, never mapped: it costs no memory, only address space,
// which the bounds below keep in check.
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

// How large a guard is (CUDADIAG_GUARD; the values are the ring format's, one byte).
enum class GuardMode : std::uint8_t {
  scaled = 0,   // as large as the buffer's mapping, within the bounds below (the default)
  granule = 1,  // one granule, whatever the buffer's size (to measure what scaling costs)
};

// Bounds on the address space guards take; a guard beyond them falls back to the largest
// that fits, down to one granule (never less).
//   kMaxGuardBytes: one buffer's guard. A buffer larger than this is watched this far past
//     its end: 1 GiB covers a stride of a billion bytes, and keeps a guard from taking more
//     than a 47-bit address space can spare for one buffer.
//   kMaxGuardTotalBytes: every guard the fence holds reserved at once (live buffers, freed
//     ones in quarantine or kept for reuse). 16 TiB is a quarter of a 47-bit (128 TiB)
//     address space, as the quarantine's own bound (lib/fence/interposer_limits.h).
inline constexpr std::uint64_t kMaxGuardBytes = 1ull << 30;
inline constexpr std::uint64_t kMaxGuardTotalBytes = 16ull << 40;

// The guard a mapping of `mapped` bytes calls for: as large as the mapping in scaled mode
// (whole granules, at least one), one granule in granule mode.
constexpr std::uint64_t wanted_guard(std::uint64_t mapped, std::uint64_t granularity, GuardMode mode) {
  if (mode == GuardMode::granule) return granularity;
  const std::uint64_t g = round_up(mapped, granularity);
  return g < granularity ? granularity : g;
}

// The guard given for `wanted` when `held` guard bytes are reserved already: the wanted
// guard, cut to `per_buffer` and to what `total` leaves, in whole granules, never less than
// one granule (a buffer is always fenced; only how far it is watched shrinks).
constexpr std::uint64_t guard_size(std::uint64_t wanted, std::uint64_t granularity, std::uint64_t held,
                                   std::uint64_t per_buffer = kMaxGuardBytes,
                                   std::uint64_t total = kMaxGuardTotalBytes) {
  std::uint64_t g = round_down(wanted, granularity);
  if (g > per_buffer) g = round_down(per_buffer, granularity);
  const std::uint64_t left = held < total ? total - held : 0;
  if (g > left) g = round_down(left, granularity);
  return g < granularity ? granularity : g;
}

// Address space to reserve: the mapping plus its guard, which is never mapped.
constexpr std::uint64_t reserved_size(std::uint64_t mapped, std::uint64_t guard) { return mapped + guard; }

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
  constexpr std::uint64_t guard_size() const { return guard_end - guard_begin; }
};

// Placement of a request inside a reservation that starts at `reserved_begin` (granule
// aligned, reserved_size(mapped_size(...), guard) bytes long), with a guard of `guard`
// bytes (whole granules, at least one: guard_size()). Requires valid_geometry().
constexpr Layout place(std::uint64_t reserved_begin, std::uint64_t bytes, std::uint64_t granularity,
                       std::uint64_t align, Side side, std::uint64_t guard) {
  Layout l;
  l.reserved_begin = reserved_begin;
  l.mapped_size = mapped_size(bytes, granularity, align);
  l.reserved_size = reserved_size(l.mapped_size, guard);
  l.bytes = bytes;
  if (side == Side::front) {
    l.guard_begin = reserved_begin;
    l.guard_end = reserved_begin + guard;
    l.mapped_begin = l.guard_end;
    l.address = l.mapped_begin;  // first byte right after the guard
    l.slack = 0;
  } else {
    l.mapped_begin = reserved_begin;
    l.guard_begin = l.mapped_end();
    l.guard_end = l.guard_begin + guard;
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

#pragma once
// The host side of the TMA load check, pure so that it is unit-tested without a GPU:
// which boxes cover the tensor, how large one box is in shared memory, where each
// element lands (after swizzling), and what every element of every box must hold
// (the source element, or the out-of-bounds fill).
//
// The device kernel (kernels/tma) loads box b at coordinates origin(b) into shared
// memory (1024-byte aligned) and copies the shared-memory bytes unchanged to
// out[b * box_bytes ...]; check_load compares that against the source.
#include <cstdint>
#include <string>
#include <vector>

#include "tma/descriptor.h"
#include "tma/element_conversion.h"

namespace cudadiag::tma {

struct LoadPlan {
  bool possible = false;
  std::string reason;                    // why not, when !possible
  unsigned element_bytes = 0;
  std::uint64_t source_bytes = 0;        // bytes from globalAddress to the last element's end
  std::vector<std::uint32_t> smem_extent;  // elements per dimension in shared memory
  std::uint64_t box_bytes = 0;           // one box in shared memory (what expect_tx waits for)
  std::vector<std::uint32_t> box_counts;   // boxes along each dimension
  std::uint64_t boxes = 0;
};

// Limits keep one check within seconds and a few hundred MiB.
inline constexpr std::uint64_t kMaxLoadSourceBytes = 512ull << 20;
inline constexpr std::uint64_t kMaxLoadOutputBytes = 512ull << 20;
inline constexpr std::uint64_t kMaxBoxBytes = 200ull << 10;

// Decides whether the kernel can load this (valid) descriptor: interleave none, a plain
// 1/2/4/8-byte type, swizzle none/32B/64B/128B, sizes within the limits.
LoadPlan plan_load(const Descriptor& d);

// Coordinates (elements) of box b's origin.
std::vector<std::int32_t> box_origin(const Descriptor& d, const LoadPlan& p, std::uint64_t b);

// Shared-memory byte offset of logical byte offset L under the swizzle (the pattern is
// a function of the address bits: 16-byte chunk index XOR the 128-byte row index).
std::uint64_t swizzled_offset(Swizzle s, std::uint64_t logical);

struct LoadCheck {
  std::uint64_t elements = 0;      // elements compared
  std::uint64_t oob_elements = 0;  // of which out of bounds (fill expected)
  std::uint64_t mismatches = 0;
  std::string first_mismatch;      // "box 3 at (64,0,1), element (5,0,0): got 0x..., expected ..."
};

// Compares every element of every box. `boxes` holds plan.boxes * plan.box_bytes bytes.
// An in-bounds element must hold the source element as the load converts it
// (element_conversion.h: tf32 rounding, _ftz flushing, under `model`).
LoadCheck check_load(const Descriptor& d, const LoadPlan& p, const std::vector<std::uint8_t>& source,
                     const std::vector<std::uint8_t>& boxes, const ConversionModel& model = {});

}  // namespace cudadiag::tma

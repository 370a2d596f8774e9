#pragma once
// The device-memory allocators a case can run with: the one vocabulary shared by the
// parent (profiles, plans, reports) and the GPU runtime in the child (kernels/runtime).
// Header-only and dependency-free, so .cu files include it too.
//
//   pool         sub-allocates from large slabs (like PyTorch's caching allocator): small
//                overruns land in valid memory and stay silent
//   direct       one cudaMalloc per buffer (PYTORCH_NO_CUDA_MEMORY_CACHING=1)
//   fence-back   driver VMM; the buffer ends flush against unmapped address space
//   fence-front  driver VMM; the buffer starts flush against unmapped address space
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/choices.h"

namespace cudadiag::profiles {

enum class Allocator : std::uint8_t { pool, direct, fence_back, fence_front };

inline constexpr ChoiceTable<Allocator, 4> kAllocators{{{Allocator::pool, "pool"},
                                                        {Allocator::direct, "direct"},
                                                        {Allocator::fence_back, "fence-back"},
                                                        {Allocator::fence_front, "fence-front"}}};

constexpr std::string_view to_string(Allocator a) { return choice_name(kAllocators, a); }

// "pool", "direct", "fence-back", "fence-front"; "fence" means fence-back.
constexpr std::optional<Allocator> parse_allocator(std::string_view text) {
  if (text == "fence") return Allocator::fence_back;
  return parse_choice(kAllocators, text);
}

constexpr bool is_fence(Allocator a) { return a == Allocator::fence_back || a == Allocator::fence_front; }

// The fence on the other side of the buffer.
constexpr Allocator other_fence(Allocator a) {
  return a == Allocator::fence_front ? Allocator::fence_back : Allocator::fence_front;
}

}  // namespace cudadiag::profiles

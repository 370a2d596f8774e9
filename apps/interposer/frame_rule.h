#pragma once
// The rule that takes a frame to its caller's at one code address, worked out from the
// call frame information of the object holding it (its .eh_frame_hdr search table, the
// FDE covering the address and its CIE: DWARF's, as C++ exceptions unwind with). Only
// the kinds compilers emit for ordinary code are rules here: the caller's stack pointer
// (the CFA) at rsp or rbp plus an offset, or loaded from rbp plus an offset (GCC's stack
// realignment); the caller's rbp unchanged or saved at an offset from the CFA or from
// rbp; the return address right below the CFA, as the ABI has it. x86-64 only.
#include <cstdint>

namespace cudadiag::interposer {

// A rule packed in 64 bits (0: none), so that it can be kept in one atomic word:
//   bits 0-1   the CFA: 1 rsp + offset, 2 rbp + offset, 3 *(rbp + offset)
//   bits 2-3   the caller's rbp: 0 unchanged, 1 at CFA + offset, 2 at rbp + offset
//   bits 4-35  the CFA's offset; bits 36-63 the rbp's (signed)
// Two values of kind 0 are no rule: the outermost frame (its return address is
// undefined), and a frame whose rule is not one of the kinds above.
namespace frame_rule {
enum Cfa : std::uint64_t { kCfaRsp = 1, kCfaRbp = 2, kCfaDeref = 3 };
enum SavedRbp : std::uint64_t { kRbpSame = 0, kRbpAtCfa = 1, kRbpAtRbp = 2 };
inline constexpr std::uint64_t kOutermost = 0x10;
inline constexpr std::uint64_t kUnknown = 0x20;

constexpr std::uint64_t pack(std::uint64_t cfa, std::int64_t cfa_off, std::uint64_t rbp, std::int64_t rbp_off) {
  return cfa | (rbp << 2) | ((static_cast<std::uint64_t>(cfa_off) & 0xffffffffull) << 4) |
         ((static_cast<std::uint64_t>(rbp_off) & 0xfffffffull) << 36);
}
constexpr std::uint64_t cfa_kind(std::uint64_t r) { return r & 3; }
constexpr std::uint64_t rbp_kind(std::uint64_t r) { return (r >> 2) & 3; }
constexpr std::int64_t cfa_offset(std::uint64_t r) { return static_cast<std::int32_t>((r >> 4) & 0xffffffffull); }
constexpr std::int64_t rbp_offset(std::uint64_t r) { return static_cast<std::int64_t>(r) >> 36; }
}  // namespace frame_rule

// Looks up what finding an address's object needs (the library's constructor calls it).
void init_frame_rules() noexcept;

// The rule at `pc`, exactly there (a return address's frame asks for its call: pc - 1).
std::uint64_t frame_rule_at(std::uint64_t pc) noexcept;

}  // namespace cudadiag::interposer

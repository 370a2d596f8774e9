#pragma once
// The words of a faulting access, shared by the GPU core dump reader (lib/coredump) and the
// report that carries its site (report/fault_site.h): whether the address was proven, what
// the instruction does with memory, and in which memory space. Kept free of JSON so the
// SASS decoder can use them.
#include <cstdint>
#include <string>

#include "util/choices.h"

namespace cudadiag::report {

// Whether the faulting address was proven (coredump/fault_address.h says how).
enum class AddressStatus : std::uint8_t { not_attempted, proven, not_recoverable, not_memory, unsupported, no_registers };
inline constexpr ChoiceTable<AddressStatus, 6> kAddressStatuses{{
    {AddressStatus::not_attempted, "not_attempted"},
    {AddressStatus::proven, "proven"},
    {AddressStatus::not_recoverable, "not_recoverable"},
    {AddressStatus::not_memory, "not_memory"},
    {AddressStatus::unsupported, "unsupported"},
    {AddressStatus::no_registers, "no_registers"},
}};

// What the faulting instruction does with memory; none: not decoded.
enum class AccessKind : std::uint8_t { none, read, write, atomic };
inline constexpr ChoiceTable<AccessKind, 3> kAccessKinds{{
    {AccessKind::read, "read"},
    {AccessKind::write, "write"},
    {AccessKind::atomic, "atomic"},
}};

// The memory space of the faulting instruction's operand; none: not decoded.
enum class MemorySpace : std::uint8_t { none, global, shared, local, generic };
inline constexpr ChoiceTable<MemorySpace, 4> kMemorySpaces{{
    {MemorySpace::global, "global"},
    {MemorySpace::shared, "shared"},
    {MemorySpace::local, "local"},
    {MemorySpace::generic, "generic"},
}};

// The access in a verb: "read", "wrote", "accessed atomically", "accessed" (not decoded).
std::string access_verb(AccessKind access);
// The access in a phrase: "a 4-byte store", "a 16-byte load", "a 4-byte atomic", "a
// 4-byte access" (kind not decoded).
std::string access_phrase(AccessKind access, unsigned bytes);

}  // namespace cudadiag::report

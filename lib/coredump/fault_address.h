#pragma once
// The faulting address, only when it is provable. A pure function of the faulting
// instruction, the instructions from it up to the lane's PC (what ran after the fault
// was raised, as far as the dump's registers are concerned) and the lane's registers:
// address = base register (a pair Rn:Rn+1 for "Rn.64") + the immediate offset.
// If any of those instructions may write a register of the address operand (a load whose
// destination is its own address's high half: LDG.E R9, [R8.64]), or control can leave
// straight-line code between them, the registers no longer hold the address: the answer
// is "not recoverable", with what is still intact, never a reconstructed address.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "coredump/sass.h"
#include "report/access_words.h"

namespace cudadiag::coredump {

// The largest power of two, up to 4096, that divides the address.
unsigned alignment_of(std::uint64_t address);

// A proof ends proven (the address is exact), not_recoverable (a register of the address
// was overwritten, or may have been), not_memory (the instruction at the error PC does not
// access memory), unsupported (an addressing form cudadiag does not read) or no_registers
// (the dump has no registers for the lane); never not_attempted.
using report::AddressStatus;

struct AddressProof {
  AddressStatus status = AddressStatus::unsupported;
  std::optional<MemoryOperand> operand;
  std::optional<std::uint64_t> address;  // only when proven
  unsigned alignment = 0;                // proven: the largest power of two (<= 4096) dividing it
  std::string reason;                    // not proven: why, in a sentence
  std::string intact;                    // not recoverable: what the dump still holds ("R8 = 0x95c10000, the low half")
};

using RegisterRead = std::function<std::optional<std::uint32_t>(unsigned reg)>;

// `after` holds the instructions from the faulting one (inclusive) to the lane's PC
// (exclusive), in address order; `lane_pc_reached` is false when the lane's PC was not
// found after the faulting instruction in straight-line code (then nothing is proven).
AddressProof prove_address(const SassInstruction& faulting, const std::vector<SassInstruction>& after,
                           bool lane_pc_reached, const RegisterRead& regs);

// Convenience over a whole listing: finds the instruction at error_pc and the span to
// lane_pc. Nothing when the listing has no instruction at error_pc.
std::optional<AddressProof> prove_address_in_listing(const std::vector<SassInstruction>& listing,
                                                     std::uint64_t error_pc, std::uint64_t lane_pc,
                                                     const RegisterRead& regs);

}  // namespace cudadiag::coredump

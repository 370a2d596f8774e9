#pragma once
// SASS as nvdisasm prints it ("/*7f45837ac270*/  LDG.E.128 R8, desc[UR4][R2.64+0x4] ;"),
// parsed into instructions, and the few facts about an instruction that the address proof
// needs: its memory operand and access width, the registers it may write, whether it can
// leave straight-line code. Where an opcode is not known the answers err towards "may
// write more" so that an address is never claimed on a guess.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/access_words.h"

namespace cudadiag::coredump {

struct SassInstruction {
  std::uint64_t address = 0;
  std::string predicate;  // "@P0", "@!PT", or empty
  std::string opcode;     // with modifiers: "LDG.E.128"
  std::vector<std::string> operands;
  std::string text() const;  // "LDG.E.128 R8, desc[UR4][R2.64+0x4]" (predicate included)
};

// Instructions of an nvdisasm listing, in order; lines that are not instructions are
// skipped. At most max_instructions are kept.
std::vector<SassInstruction> parse_disassembly(std::string_view text, std::size_t max_instructions = 1u << 20);

struct MemoryOperand {
  report::MemorySpace space = report::MemorySpace::generic;
  report::AccessKind kind = report::AccessKind::none;
  unsigned width_bytes = 4;
  std::optional<unsigned> base_register;  // R<n>; nullopt for RZ
  bool base_is_pair = false;              // R<n>.64: R<n> low half, R<n+1> high half
  std::int64_t offset = 0;                // the immediate
  std::string unsupported;                // a term not read (a uniform register, a second address): why
  std::string text;                       // the operand as printed
};

// The memory operand of a load, store or atomic; nothing for other instructions.
std::optional<MemoryOperand> memory_operand(const SassInstruction& insn);

// General registers (R<n>) the instruction may write; RZ never counts.
std::vector<unsigned> registers_written(const SassInstruction& insn);

// A branch, call, return or exit: code after it in the listing need not have run after it.
bool leaves_straight_line(const SassInstruction& insn);

}  // namespace cudadiag::coredump

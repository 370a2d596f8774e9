#include "coredump/fault_address.h"

#include <fmt/format.h>

#include <algorithm>

namespace cudadiag::coredump {
unsigned alignment_of(std::uint64_t a) {
  unsigned align = 1;
  while (align < 4096 && (a & align) == 0) align <<= 1;
  return align;
}

AddressProof prove_address(const SassInstruction& faulting, const std::vector<SassInstruction>& after,
                           bool lane_pc_reached, const RegisterRead& regs) {
  AddressProof p;
  p.operand = memory_operand(faulting);
  if (!p.operand) {
    p.status = AddressStatus::not_memory;
    p.reason = "the instruction at the error PC (" + faulting.text() + ") does not access memory";
    return p;
  }
  const MemoryOperand& m = *p.operand;
  if (!m.unsupported.empty()) {
    p.status = AddressStatus::unsupported;
    p.reason = m.unsupported;
    return p;
  }
  std::vector<unsigned> address_regs;
  if (m.base_register) {
    address_regs.push_back(*m.base_register);
    if (m.base_is_pair) address_regs.push_back(*m.base_register + 1);
  }
  // What the dump holds for each register of the address, and which of them were written.
  std::vector<std::string> clobbered;
  for (unsigned r : address_regs)
    for (const auto& insn : after) {
      const auto w = registers_written(insn);
      if (std::find(w.begin(), w.end(), r) != w.end()) {
        clobbered.push_back(fmt::format("R{} is written by {} at 0x{:x}", r, insn.text(), insn.address));
        break;
      }
    }
  std::string control;
  for (const auto& insn : after)
    if (&insn != &after.front() && leaves_straight_line(insn)) {
      control = fmt::format("{} at 0x{:x} can leave straight-line code before the lane's PC", insn.text(), insn.address);
      break;
    }
  if (!lane_pc_reached) control = "the lane's PC is not after the error PC in straight-line code";
  if (!clobbered.empty() || !control.empty()) {
    p.status = AddressStatus::not_recoverable;
    std::string why;
    for (const auto& c : clobbered) why += (why.empty() ? "" : "; ") + c;
    if (!control.empty()) why += (why.empty() ? "" : "; ") + control;
    p.reason = why;
    std::vector<std::string> intact;
    for (std::size_t i = 0; i < address_regs.size(); ++i) {
      const unsigned r = address_regs[i];
      const bool hit = std::any_of(clobbered.begin(), clobbered.end(),
                                   [&](const std::string& c) { return c.rfind(fmt::format("R{} ", r), 0) == 0; });
      const auto v = regs(r);
      if (!hit && control.empty() && v)
        intact.push_back(fmt::format("R{} = 0x{:x} ({})", r, *v,
                                     !m.base_is_pair ? "the whole 32-bit base" : i == 0 ? "the low 32 bits" : "the high 32 bits"));
    }
    for (const auto& s : intact) p.intact += (p.intact.empty() ? "" : ", ") + s;
    return p;
  }
  std::uint64_t base = 0;
  if (m.base_register) {
    const auto lo = regs(*m.base_register);
    const auto hi = m.base_is_pair ? regs(*m.base_register + 1) : std::optional<std::uint32_t>(0);
    if (!lo || !hi) {
      p.status = AddressStatus::no_registers;
      p.reason = fmt::format("the dump holds no value of R{} for this lane", !lo ? *m.base_register : *m.base_register + 1);
      return p;
    }
    base = m.base_is_pair ? (std::uint64_t{*hi} << 32) | *lo : *lo;
  }
  std::uint64_t address = base + static_cast<std::uint64_t>(m.offset);
  if (!m.base_is_pair) address &= 0xffffffffu;
  p.status = AddressStatus::proven;
  p.address = address;
  p.alignment = alignment_of(address);
  return p;
}

std::optional<AddressProof> prove_address_in_listing(const std::vector<SassInstruction>& listing,
                                                     std::uint64_t error_pc, std::uint64_t lane_pc,
                                                     const RegisterRead& regs) {
  const auto at = std::find_if(listing.begin(), listing.end(),
                               [&](const SassInstruction& i) { return i.address == error_pc; });
  if (at == listing.end()) return std::nullopt;
  std::vector<SassInstruction> after;
  bool reached = false;
  for (auto it = at; it != listing.end(); ++it) {
    if (it->address == lane_pc) {
      reached = true;
      break;
    }
    if (it->address > lane_pc) break;
    after.push_back(*it);
  }
  // A lane parked on the faulting instruction itself: nothing ran after it.
  if (lane_pc == error_pc) reached = true;
  if (after.empty()) after.push_back(*at);
  return prove_address(*at, after, reached, regs);
}

}  // namespace cudadiag::coredump

#include "coredump/sass.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace cudadiag::coredump {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == ';')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_modifiers(std::string_view opcode) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= opcode.size(); ++i)
    if (i == opcode.size() || opcode[i] == '.') {
      parts.push_back(opcode.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

bool has_modifier(const std::vector<std::string_view>& parts, std::string_view m) {
  return std::find(parts.begin() + 1, parts.end(), m) != parts.end();
}

// "R12" -> 12, "R12.reuse" -> 12; nothing for RZ and non-registers.
std::optional<unsigned> general_register(std::string_view op) {
  if (op.size() < 2 || op[0] != 'R' || !std::isdigit(static_cast<unsigned char>(op[1]))) return std::nullopt;
  unsigned n = 0;
  const auto r = std::from_chars(op.data() + 1, op.data() + op.size(), n);
  if (r.ec != std::errc() || n > 255) return std::nullopt;
  return n;
}

bool is_predicate(std::string_view op) {
  if (!op.empty() && op[0] == '!') op.remove_prefix(1);
  return op == "PT" || (op.size() >= 2 && op[0] == 'P' && std::isdigit(static_cast<unsigned char>(op[1])));
}

// Families whose destination is one 32-bit register unless a 64/128-bit modifier says more.
constexpr std::array<std::string_view, 50> kSingleDestination{
    "IMAD", "IADD3", "IADD", "LEA", "MOV", "MOV32I", "FADD", "FMUL", "FFMA", "FMNMX", "IMNMX", "VIMNMX", "SHF",
    "SHL", "SHR", "LOP3", "LOP", "S2R", "SEL", "FSEL", "I2F", "F2I", "I2FP", "F2FP", "POPC", "FLO", "BREV", "PRMT",
    "IABS", "ISCADD", "LDG", "LDS", "LDL", "LD", "LDC", "SHFL", "VOTE", "HADD2", "HMUL2", "HFMA2", "MUFU", "P2R",
    "IMUL", "FRND", "BMSK", "SGXT", "ATOMG", "ATOM", "ATOMS", "I2I"};

constexpr std::array<std::string_view, 8> kControlFlow{"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "KILL"};

}  // namespace

std::string SassInstruction::text() const {
  std::string s = predicate.empty() ? opcode : predicate + " " + opcode;
  for (std::size_t i = 0; i < operands.size(); ++i) s += (i == 0 ? " " : ", ") + operands[i];
  return s;
}

std::vector<SassInstruction> parse_disassembly(std::string_view text, std::size_t max_instructions) {
  std::vector<SassInstruction> out;
  std::size_t pos = 0;
  while (pos < text.size() && out.size() < max_instructions) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    // "/*<hex address>*/ <instruction> ;" possibly followed by a "/* ... */" encoding comment.
    const auto open = line.find("/*");
    if (open == std::string_view::npos) continue;
    const auto close = line.find("*/", open + 2);
    if (close == std::string_view::npos) continue;
    const std::string_view hex = line.substr(open + 2, close - open - 2);
    std::uint64_t address = 0;
    const auto r = std::from_chars(hex.data(), hex.data() + hex.size(), address, 16);
    if (r.ec != std::errc() || r.ptr != hex.data() + hex.size() || hex.empty()) continue;
    std::string_view rest = line.substr(close + 2);
    if (const auto semi = rest.find(';'); semi != std::string_view::npos) rest = rest.substr(0, semi);
    rest = trim(rest);
    if (rest.empty()) continue;
    SassInstruction insn;
    insn.address = address;
    if (rest[0] == '@') {
      const auto sp = rest.find(' ');
      insn.predicate = std::string(rest.substr(0, sp));
      rest = sp == std::string_view::npos ? std::string_view() : trim(rest.substr(sp));
    }
    const auto sp = rest.find(' ');
    insn.opcode = std::string(rest.substr(0, sp));
    if (insn.opcode.empty()) continue;
    if (sp != std::string_view::npos) {
      std::string_view ops = trim(rest.substr(sp));
      int depth = 0;
      std::size_t start = 0;
      for (std::size_t i = 0; i <= ops.size(); ++i) {
        if (i < ops.size() && (ops[i] == '[' || ops[i] == '(')) ++depth;
        if (i < ops.size() && (ops[i] == ']' || ops[i] == ')') && depth > 0) --depth;
        if (i == ops.size() || (ops[i] == ',' && depth == 0)) {
          const auto op = trim(ops.substr(start, i - start));
          if (!op.empty()) insn.operands.emplace_back(op);
          start = i + 1;
        }
      }
    }
    out.push_back(std::move(insn));
  }
  return out;
}

std::optional<MemoryOperand> memory_operand(const SassInstruction& insn) {
  const auto parts = split_modifiers(insn.opcode);
  const std::string_view base = parts[0];
  MemoryOperand m;
  using report::AccessKind;
  using report::MemorySpace;
  if (base == "LDG" || base == "LDS" || base == "LDL" || base == "LD") m.kind = AccessKind::read;
  else if (base == "STG" || base == "STS" || base == "STL" || base == "ST") m.kind = AccessKind::write;
  else if (base == "ATOMG" || base == "ATOMS" || base == "ATOM" || base == "RED" || base == "REDG") m.kind = AccessKind::atomic;
  else return std::nullopt;
  m.space = base == "LDG" || base == "STG" || base == "ATOMG" || base == "REDG" ? MemorySpace::global
            : base == "LDS" || base == "STS" || base == "ATOMS"                 ? MemorySpace::shared
            : base == "LDL" || base == "STL"                                    ? MemorySpace::local
                                                                                : MemorySpace::generic;
  m.width_bytes = 4;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto p = parts[i];
    if (p == "U8" || p == "S8") m.width_bytes = 1;
    else if (p == "U16" || p == "S16" || p == "F16x2") m.width_bytes = p == "F16x2" ? 4 : 2;
    else if (p == "64" || p == "U64" || p == "S64" || p == "F64") m.width_bytes = 8;
    else if (p == "128") m.width_bytes = 16;
  }
  // The address is the last bracket group of the operand that has one: desc[UR4][R2.64+0x4].
  const std::string* op = nullptr;
  for (const auto& o : insn.operands)
    if (o.find('[') != std::string::npos && o.rfind("c[", 0) != 0) {
      if (op != nullptr) {
        m.unsupported = "two memory operands";
        m.text = o;
        return m;
      }
      op = &o;
    }
  if (op == nullptr) return std::nullopt;
  m.text = *op;
  const auto open = op->rfind('[');
  const auto close = op->find(']', open);
  if (close == std::string::npos) {
    m.unsupported = "an address operand that does not close";
    return m;
  }
  const std::string_view inside = std::string_view(*op).substr(open + 1, close - open - 1);
  // Terms joined by '+': a register (R2, R2.64, RZ), an immediate (0x4, -0x4), or something
  // not read here (a uniform register).
  std::size_t start = 0;
  bool saw_register = false;
  for (std::size_t i = 0; i <= inside.size(); ++i) {
    if (i < inside.size() && inside[i] != '+') continue;
    std::string_view term = trim(inside.substr(start, i - start));
    start = i + 1;
    if (term.empty()) continue;
    bool negative = false;
    if (term[0] == '-') {
      negative = true;
      term.remove_prefix(1);
    }
    if (term.rfind("0x", 0) == 0) {
      std::uint64_t v = 0;
      const auto r = std::from_chars(term.data() + 2, term.data() + term.size(), v, 16);
      if (r.ec != std::errc() || r.ptr != term.data() + term.size() || v > (1ull << 40)) {
        m.unsupported = "an immediate offset that does not parse: " + std::string(term);
        return m;
      }
      m.offset += negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    } else if (!negative && (term == "RZ" || term.rfind("RZ.", 0) == 0) && !saw_register) {
      saw_register = true;
      m.base_is_pair = term.find(".64") != std::string_view::npos;
    } else if (const auto r = general_register(term); r && !negative && !saw_register) {
      saw_register = true;
      m.base_register = *r;
      m.base_is_pair = term.find(".64") != std::string_view::npos;
    } else {
      m.unsupported = "the address term " + std::string(term) + " is not read by cudadiag";
      return m;
    }
  }
  return m;
}

std::vector<unsigned> registers_written(const SassInstruction& insn) {
  // The destination: the first operand when it is R<n>, or the second after a predicate
  // destination (ATOMG PT, R5, ...). Stores and reductions start with the address.
  std::optional<unsigned> dest;
  if (!insn.operands.empty()) {
    dest = general_register(insn.operands[0]);
    if (!dest && insn.operands.size() > 1 && is_predicate(insn.operands[0])) dest = general_register(insn.operands[1]);
  }
  if (!dest) return {};
  const auto parts = split_modifiers(insn.opcode);
  unsigned count = 8;  // an opcode not known here: assume a wide write (never a wrong address)
  if (std::find(kSingleDestination.begin(), kSingleDestination.end(), parts[0]) != kSingleDestination.end()) count = 1;
  for (std::string_view m : {"64", "U64", "S64", "F64", "WIDE"})
    if (has_modifier(parts, m)) count = std::max(count, 2u);
  if (has_modifier(parts, "128")) count = std::max(count, 4u);
  std::vector<unsigned> out;
  for (unsigned i = 0; i < count && *dest + i < 255; ++i) out.push_back(*dest + i);
  return out;
}

bool leaves_straight_line(const SassInstruction& insn) {
  const auto parts = split_modifiers(insn.opcode);
  return std::find(kControlFlow.begin(), kControlFlow.end(), parts[0]) != kControlFlow.end();
}

}  // namespace cudadiag::coredump

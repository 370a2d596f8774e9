// The address logic on disassembly text: exact where every register of the address is
// intact, "not recoverable" (with the intact half) where one may have been written.
#include <catch2/catch.hpp>

#include <map>

#include "coredump/fault_address.h"
#include "coredump/sass.h"
#include "fixtures.h"

using namespace cudadiag::coredump;

namespace {

RegisterRead regs(std::map<unsigned, std::uint32_t> values) {
  return [values](unsigned r) -> std::optional<std::uint32_t> {
    const auto it = values.find(r);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

SassInstruction one(const std::string& line) {
  const auto v = parse_disassembly("        /*0100*/                   " + line + " ;\n");
  REQUIRE(v.size() == 1);
  return v.front();
}

}  // namespace

TEST_CASE("nvdisasm lines parse into predicate, opcode and operands") {
  const auto v = parse_disassembly(
      "\t//## File \"x.cu\", line 6\n"
      "        /*7f41a77ac320*/                   LDG.E R9, desc[UR4][R8.64] ;\n"
      "        /*7f41a77ac330*/               @!P0 IMAD R7, R11, UR7, R6 ;\n"
      ".L_x_0:\n"
      "        /*7f41a77ac340*/                   EXIT ;\n");
  REQUIRE(v.size() == 3);
  CHECK(v[0].address == 0x7f41a77ac320);
  CHECK(v[0].opcode == "LDG.E");
  CHECK(v[0].operands == std::vector<std::string>{"R9", "desc[UR4][R8.64]"});
  CHECK(v[1].predicate == "@!P0");
  CHECK(v[1].text() == "@!P0 IMAD R7, R11, UR7, R6");
  CHECK(v[2].operands.empty());
}

TEST_CASE("memory operands: width from the opcode, base pair and immediate from the brackets") {
  auto m = memory_operand(one("LDG.E.128 R8, desc[UR4][R2.64+0x4]"));
  REQUIRE(m);
  CHECK(m->kind == cudadiag::report::AccessKind::read);
  CHECK(m->space == cudadiag::report::MemorySpace::global);
  CHECK(m->width_bytes == 16);
  CHECK(m->base_register == 2u);
  CHECK(m->base_is_pair);
  CHECK(m->offset == 4);
  m = memory_operand(one("STG.E.U8 desc[UR4][R4.64+-0x10], R0"));
  REQUIRE(m);
  CHECK(m->kind == cudadiag::report::AccessKind::write);
  CHECK(m->width_bytes == 1);
  CHECK(m->offset == -16);
  m = memory_operand(one("STS.64 [R3+0x20], R4"));
  REQUIRE(m);
  CHECK(m->space == cudadiag::report::MemorySpace::shared);
  CHECK(m->width_bytes == 8);
  CHECK_FALSE(m->base_is_pair);
  m = memory_operand(one("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R5, desc[UR4][R2.64], R7"));
  REQUIRE(m);
  CHECK(m->kind == cudadiag::report::AccessKind::atomic);
  m = memory_operand(one("LDG.E R2, desc[UR4][R2.64+UR6]"));
  REQUIRE(m);
  CHECK_FALSE(m->unsupported.empty());
  CHECK_FALSE(memory_operand(one("IMAD.WIDE R2, R7, 0x4, R2")));
  CHECK_FALSE(memory_operand(one("LDC.64 R2, c[0x0][0x210]")));
}

TEST_CASE("registers written: destination width, predicate destinations, unknown opcodes counted wide") {
  CHECK(registers_written(one("LDG.E R9, desc[UR4][R8.64]")) == std::vector<unsigned>{9});
  CHECK(registers_written(one("LDG.E.128 R8, desc[UR4][R2.64+0x4]")) == std::vector<unsigned>{8, 9, 10, 11});
  CHECK(registers_written(one("IMAD.WIDE.U32 R4, R7, 0x4, R4")) == std::vector<unsigned>{4, 5});
  CHECK(registers_written(one("IADD3 R0, P0, R5, UR4, RZ")) == std::vector<unsigned>{0});
  CHECK(registers_written(one("ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R7")) == std::vector<unsigned>{5});
  CHECK(registers_written(one("STG.E desc[UR4][R2.64], R5")).empty());
  CHECK(registers_written(one("ISETP.GT.AND P0, PT, R2, -0x1, PT")).empty());
  CHECK(registers_written(one("HMMA.16816.F32 R4, R8, R12, R4")).size() == 8);
  CHECK(leaves_straight_line(one("BRA `(.L_x_0)")));
  CHECK_FALSE(leaves_straight_line(one("FADD R5, R0, 1")));
}

TEST_CASE("gather_bad_index's listing: LDG.E R9, [R8.64] overwrites R9; R8 is the intact half") {
  const auto listing = parse_disassembly(cudadiag::test::slurp_file(cudadiag::test::coredump_data("gather_bad_index.sass.txt")));
  const auto p = prove_address_in_listing(listing, 0x7f41a77ac320, 0x7f41a77ac350, regs({{8, 0x95c10000}, {9, 0}}));
  REQUIRE(p);
  CHECK(p->status == AddressStatus::not_recoverable);
  CHECK_FALSE(p->address);
  CHECK(p->intact == "R8 = 0x95c10000 (the low 32 bits)");
}

TEST_CASE("the same load with the lane parked on it still counts its own destination") {
  const auto listing = parse_disassembly(cudadiag::test::slurp_file(cudadiag::test::coredump_data("gather_bad_index.sass.txt")));
  const auto p = prove_address_in_listing(listing, 0x7f41a77ac320, 0x7f41a77ac320, regs({{8, 0x95c10000}, {9, 0x7f41}}));
  REQUIRE(p);
  CHECK(p->status == AddressStatus::not_recoverable);
}

TEST_CASE("misaligned16's listing: R2:R3 + 0x4, untouched by LDG.E.128 R8 and IMAD.WIDE R4") {
  const auto listing = parse_disassembly(cudadiag::test::slurp_file(cudadiag::test::coredump_data("misaligned16.sass.txt")));
  const auto p = prove_address_in_listing(listing, 0x7f45837ac270, 0x7f45837ac290, regs({{2, 0x7be00000}, {3, 0x7f45}}));
  REQUIRE(p);
  CHECK(p->status == AddressStatus::proven);
  REQUIRE(p->address);
  CHECK(*p->address == 0x7f457be00004);
  CHECK(p->alignment == 4);
  CHECK(p->operand->width_bytes == 16);
}

TEST_CASE("an address register written between the error PC and the lane's PC is not trusted") {
  const std::vector<SassInstruction> after{one("LDG.E R0, desc[UR4][R2.64]"), one("IADD3 R3, R3, 0x1, RZ")};
  const auto p = prove_address(after[0], after, true, regs({{2, 0x1000}, {3, 0x7f00}}));
  CHECK(p.status == AddressStatus::not_recoverable);
  CHECK(p.intact == "R2 = 0x1000 (the low 32 bits)");
  CHECK(p.reason.find("R3 is written by IADD3") != std::string::npos);
}

TEST_CASE("a branch between, a lane PC before the error PC, or missing registers: no address") {
  const std::vector<SassInstruction> with_branch{one("LDG.E R0, desc[UR4][R2.64]"), one("BRA `(.L_x_1)")};
  CHECK(prove_address(with_branch[0], with_branch, true, regs({{2, 1}, {3, 2}})).status == AddressStatus::not_recoverable);
  const std::vector<SassInstruction> alone{one("LDG.E R0, desc[UR4][R2.64]")};
  CHECK(prove_address(alone[0], alone, false, regs({{2, 1}, {3, 2}})).status == AddressStatus::not_recoverable);
  CHECK(prove_address(alone[0], alone, true, regs({{2, 1}})).status == AddressStatus::no_registers);
  CHECK(prove_address(one("FADD R5, R0, 1"), alone, true, regs({})).status == AddressStatus::not_memory);
}

// The tables of real dumps, against what cuda-gdb printed from them.
#include <catch2/catch.hpp>

#include <algorithm>

#include "coredump/core_dump.h"
#include "coredump/cubin.h"
#include "coredump/dump_file.h"
#include "coredump/dwarf_line.h"
#include "coredump/elf_file.h"
#include "coredump/exception_kind.h"
#include "fixtures.h"

using namespace cudadiag::coredump;
using cudadiag::test::coredump_data;

TEST_CASE("gather_bad_index: device, grid, block (2,0,0), 32 lanes with the registers cuda-gdb printed") {
  const DumpFile f(coredump_data("gather_bad_index.nvcudmp"));
  const CoreDump d = read_core_dump(f.bytes());
  REQUIRE(d.devices.size() == 1);
  CHECK(d.devices[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(d.devices[0].num_sms == 132u);
  CHECK(d.devices[0].instruction_size == 16);
  REQUIRE(d.grids.size() == 1);
  CHECK(d.grids[0].grid_dim == Dim3{4, 1, 1});
  CHECK(d.grids[0].block_dim == Dim3{32, 1, 1});
  CHECK(d.sms.size() == 132);
  REQUIRE(d.ctas.size() == 1);
  CHECK(d.ctas[0].block == Dim3{2, 0, 0});
  REQUIRE(d.warps.size() == 1);
  CHECK(d.warps[0].error_pc == 0x7f41a77ac320u);
  CHECK(d.warps[0].valid_lanes == 0xffffffffu);
  REQUIRE(d.lanes.size() == 32);
  const Lane& l0 = d.lanes[0];
  CHECK(l0.pc == 0x7f41a77ac350u);
  CHECK(l0.exception == 14u);
  CHECK(l0.reg(2) == 0x9fe20100u);  // R2 0x9fe20100
  CHECK(l0.reg(3) == 0x7f41u);
  CHECK(l0.reg(8) == 0x95c10000u);  // R8 0x95c10000
  CHECK(l0.reg(9) == 0u);
  CHECK(l0.reg(11) == 2u);
  CHECK_FALSE(l0.reg(200));  // the dump holds the registers the kernel uses, no more
  CHECK(d.images.size() == 10);
}

TEST_CASE("far_write: the warp has no error PC; the SM reports exception 14 at 0x7faa237ac2a0") {
  const DumpFile f(coredump_data("far_write.nvcudmp"));
  const CoreDump d = read_core_dump(f.bytes());
  REQUIRE(d.warps.size() == 1);
  CHECK_FALSE(d.warps[0].error_pc);
  CHECK(d.warps[0].warp_id == 1);
  const auto sm = std::find_if(d.sms.begin(), d.sms.end(), [](const Sm& s) { return s.sm_id == 124; });
  REQUIRE(sm != d.sms.end());
  CHECK(sm->exception == 14u);
  CHECK(sm->error_pc == 0x7faa237ac2a0u);
  for (const auto& l : d.lanes) CHECK(l.exception == 0u);
}

TEST_CASE("the kernel's cubin: symbol by PC and the line table of -lineinfo") {
  const DumpFile f(coredump_data("device_assert.nvcudmp"));
  const CoreDump d = read_core_dump(f.bytes());
  CubinLookup found;
  for (const auto& img : d.images)
    if (auto l = look_up_pc(img.bytes, 0x7fa1377ac370); l.function) found = l;
  REQUIRE(found.function);
  CHECK(found.function->name == "_Z14check_positivePKi");
  CHECK(found.function->value == 0x7fa1377ac200u);
  CHECK(found.function->index == 16);  // what nvdisasm -fun takes
  CHECK(found.has_line_table);
  REQUIRE(found.line);
  CHECK(found.line->line == 6);
  CHECK(found.line->file == "/tmp/tmp.nmnPK2WDWE/src/device_assert.cu");
}

TEST_CASE("the kernel's line program decodes to the rows readelf shows") {
  const DumpFile f(coredump_data("device_assert.nvcudmp"));
  const CoreDump d = read_core_dump(f.bytes());
  const RelocatedImage* kernel = nullptr;
  for (const auto& img : d.images)
    if (look_up_pc(img.bytes, 0x7fa1377ac200).function) kernel = &img;
  REQUIRE(kernel != nullptr);
  const ElfFile elf = ElfFile::parse(kernel->bytes, "image");
  const ElfSection* lines = elf.find(".debug_line");
  REQUIRE(lines != nullptr);
  const auto decoded = decode_debug_line(lines->bytes);
  CHECK(decoded.error.empty());
  REQUIRE(decoded.tables.size() == 1);
  const auto& rows = decoded.tables[0].rows;
  // readelf --debug-dump=rawline: 200 line 4, 210 line 5, 260 line 6, 380 line 7, end at 480.
  REQUIRE(rows.size() == 5);
  const std::uint64_t base = 0x7fa1377ac000;
  CHECK((rows[0].address == base + 0x200 && rows[0].line == 4));
  CHECK((rows[1].address == base + 0x210 && rows[1].line == 5));
  CHECK((rows[2].address == base + 0x260 && rows[2].line == 6));
  CHECK((rows[3].address == base + 0x380 && rows[3].line == 7));
  CHECK((rows[4].address == base + 0x480 && rows[4].end_sequence));
  CHECK(decoded.tables[0].files.at(1) == "/tmp/tmp.nmnPK2WDWE/src/device_assert.cu");
  // Cut inside the line program: the unit no longer fits, and the reason is given.
  const auto cut = decode_debug_line(*lines->bytes.slice(0, lines->bytes.size() - 5));
  CHECK(cut.error.find("runs past the section") != std::string::npos);
  CHECK_FALSE(line_for_pc(cut, base + 0x370));
}

TEST_CASE("a line program cut short keeps what it decoded and says why it stopped") {
  const std::string garbage = std::string("\x40\x00\x00\x00\x02\x00", 6);  // claims 64 bytes, holds 2
  const auto decoded = decode_debug_line(Bytes(garbage));
  CHECK(decoded.tables.empty());
  CHECK(decoded.error.find("runs past the section") != std::string::npos);
}

TEST_CASE("exception codes follow CUDBGException_t") {
  CHECK(exception_name(14) == "Warp Illegal Address");
  CHECK(exception_name(6) == "Warp Misaligned Address");
  CHECK(exception_name(12) == "Warp Assert");
  CHECK(exception_info(14).memory_access);
  CHECK_FALSE(exception_info(12).memory_access);
  CHECK(exception_name(99) == "exception code 99");
  CHECK(exception_info(99).id() == "unknown");
  CHECK(exception_info(99).kind == cudadiag::report::ExceptionKind::unknown);
}

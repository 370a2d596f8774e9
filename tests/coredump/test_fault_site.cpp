// Each real dump gives what cuda-gdb printed for it (tests/coredump/data/X.cuda-gdb.txt):
// exception, kernel, line, block/thread, error PC as symbol + offset; and the address
// where it is provable.
#include <catch2/catch.hpp>

#include "coredump/core_dump.h"
#include "coredump/dump_file.h"
#include "coredump/fault_site.h"
#include "coredump/render_site.h"
#include "fixtures.h"
#include "util/text_layout.h"

using namespace cudadiag;
using namespace cudadiag::coredump;
using cudadiag::test::coredump_data;
using cudadiag::test::printed_address;
using cudadiag::test::stored_listing;

namespace {

FaultSite site_of(const std::string& fixture, bool with_listing = true) {
  return read_fault_site(coredump_data(fixture + ".nvcudmp"), with_listing ? stored_listing(fixture) : DisassembleFn{},
                         "no nvdisasm in this test");
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("use_after_free: Warp Illegal Address in touch at use_after_free.cu:5, thread (0,0,0), R2:R3 exact") {
  const auto s = site_of("use_after_free");
  REQUIRE(s.unreadable.empty());
  CHECK(s.device == "NVIDIA H100 80GB HBM3");
  CHECK(s.sm_type == "sm_90");
  CHECK(s.exception == "Warp Illegal Address");
  CHECK(s.exception_code == 14);
  CHECK(s.reported_by == ReportedBy::lanes);
  CHECK(s.kernel == "touch(float*, int)");
  CHECK(s.grid_dim == Dim3{1, 1, 1});
  CHECK(s.block_dim == Dim3{64, 1, 1});
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x7f24cb7ac270);  // "The exception was triggered at PC 0x7f24cb7ac270"
  CHECK(s.pc_basis == PcBasis::warp_error_pc);
  CHECK(s.function == "touch(float*, int)");
  CHECK(s.function_offset == 112);  // <touch(float*, int)+112>
  REQUIRE(s.line);
  CHECK(ends_with(s.line->file, "use_after_free.cu"));
  CHECK(s.line->line == 5);
  CHECK(s.faulting_lanes == 32);  // cuda-gdb lists warp 0's 32 lanes with the exception
  CHECK(s.faulting_warps == 1);
  REQUIRE(s.first);
  CHECK(s.first->block == Dim3{0, 0, 0});
  CHECK(s.first->thread == Dim3{0, 0, 0});
  CHECK(s.first->sm == 124);
  CHECK(s.instruction == "LDG.E R0, desc[UR4][R2.64]");
  CHECK(s.address_status == report::AddressStatus::proven);
  CHECK(s.access == report::AccessKind::read);
  CHECK(s.access_bytes == 4);
  // The freed pointer the program printed; thread t reads element 34 * t.
  const std::uint64_t freed = printed_address("use_after_free", "freed");
  REQUIRE(s.address);
  CHECK(*s.address == freed);
  REQUIRE(s.threads.size() == 32);
  for (const auto& t : s.threads) {
    REQUIRE(t.address);
    CHECK(*t.address == freed + 4ull * 34 * t.thread.x);
  }
}

TEST_CASE("far_write: the SM reports the exception; every thread's store address is buffer + 1 GiB + 4*t") {
  const auto s = site_of("far_write");
  REQUIRE(s.unreadable.empty());
  CHECK(s.exception == "Warp Illegal Address");
  CHECK(s.reported_by == ReportedBy::sm);  // no lane carries the code in this dump (cuda-gdb crashed on it)
  CHECK(s.faulting_lanes == 0);
  CHECK(s.kernel == "far_write(float*, long long)");
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x7faa237ac2a0);  // "The exception was triggered at PC 0x7faa237ac2a0"
  CHECK(s.pc_basis == PcBasis::sm_error_pc);
  CHECK(s.function_offset == 0xa0);
  REQUIRE(s.line);
  CHECK(s.line->line == 6);  // (far_write.cu:6)
  CHECK(s.instruction == "STG.E desc[UR4][R2.64], R5");
  CHECK(s.address_status == report::AddressStatus::proven);
  CHECK(s.access == report::AccessKind::write);
  const std::uint64_t buffer = printed_address("far_write", "buffer");
  REQUIRE(s.threads.size() == 32);  // the warp left on the SM: threads 32..63
  for (const auto& t : s.threads) {
    CHECK(t.thread.x >= 32);
    REQUIRE(t.address);
    CHECK(*t.address == buffer + (1ull << 30) + 4ull * t.thread.x);
  }
  REQUIRE(s.address);
  CHECK(*s.address == buffer + (1ull << 30) + 4 * 32);
}

TEST_CASE("gather_bad_index: block (2,0,0); the load overwrote R9, its own address's high half: not recoverable") {
  const auto s = site_of("gather_bad_index");
  CHECK(s.exception == "Warp Illegal Address");
  CHECK(s.kernel == "gather_rows(float const*, long long const*, float*, int)");
  CHECK(s.grid_dim == Dim3{4, 1, 1});
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x7f41a77ac320);
  CHECK(s.function_offset == 288);
  REQUIRE(s.line);
  CHECK(s.line->line == 6);
  CHECK(s.faulting_blocks == 1);
  REQUIRE(s.first);
  CHECK(s.first->block == Dim3{2, 0, 0});
  CHECK(s.first->pc == 0x7f41a77ac350);  // three instructions past the error PC
  CHECK(s.instruction == "LDG.E R9, desc[UR4][R8.64]");
  CHECK(s.address_status == report::AddressStatus::not_recoverable);
  CHECK_FALSE(s.address);
  for (const auto& t : s.threads) CHECK_FALSE(t.address);
  CHECK(s.address_note.find("R9 is written by LDG.E R9") != std::string::npos);
  CHECK(s.address_note.find("R8 = 0x95c10000 (the low 32 bits)") != std::string::npos);
  const auto text = describe_access(s);
  CHECK(text.rfind("not recoverable", 0) == 0);
  // No reconstructed address, not even a guess: neither R9:R8 as dumped nor with R9 taken
  // from a neighbouring pointer's high half.
  CHECK(text.find("at 0x95c1") == std::string::npos);
  CHECK(text.find("0x7f4195c1") == std::string::npos);
}

TEST_CASE("misaligned16: a 16-byte load at an address aligned to 4 bytes") {
  const auto s = site_of("misaligned16");
  CHECK(s.exception == "Warp Misaligned Address");
  CHECK(s.kernel == "load_vector(float const*, float*)");
  CHECK(s.function_offset == 112);
  REQUIRE(s.line);
  CHECK(s.line->line == 4);
  CHECK(s.faulting_lanes == 32);
  CHECK(s.instruction == "LDG.E.128 R8, desc[UR4][R2.64+0x4]");
  CHECK(s.address_status == report::AddressStatus::proven);
  CHECK(s.access_bytes == 16);
  CHECK(s.alignment == 4);
  const std::uint64_t in = printed_address("misaligned16", "in");
  REQUIRE(s.address);
  CHECK(*s.address == in + 4);  // in + 1 + 4 * 0 floats
  for (const auto& t : s.threads) CHECK(*t.address == in + 4 + 16ull * t.thread.x);
  CHECK(describe_access(s).find("a 16-byte load at an address aligned to 4 bytes") != std::string::npos);
}

TEST_CASE("device_assert: Warp Assert on thread 17 names the assert's own line (6), not the line after it") {
  const auto s = site_of("device_assert");
  CHECK(s.exception == "Warp Assert");
  CHECK(s.exception_code == 12);
  CHECK(s.kernel == "check_positive(int const*)");
  CHECK(s.faulting_lanes == 1);
  REQUIRE(s.first);
  CHECK(s.first->thread == Dim3{17, 0, 0});
  CHECK(s.first->pc == 0x7fa1377ac380);  // cuda-gdb: pc ... <check_positive(int const*)+384>, line 7
  CHECK(s.pc_basis == PcBasis::instruction_before_lane_pc);
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x7fa1377ac370);
  CHECK(s.function_offset == 368);
  REQUIRE(s.line);
  CHECK(s.line->line == 6);  // the assert; cuda-gdb showed 7
  CHECK(s.instruction == "CALL.ABS.NOINC R2");
  CHECK(s.address_status == report::AddressStatus::not_attempted);
  CHECK_FALSE(s.address);
}

TEST_CASE("without a disassembler the site still has kernel and line, and says how to get nvdisasm") {
  const auto s = site_of("use_after_free", false);
  CHECK(s.kernel == "touch(float*, int)");
  REQUIRE(s.line);
  CHECK(s.instruction.empty());
  CHECK_FALSE(s.address);
  CHECK(s.address_note.find("no disassembler") != std::string::npos);
  CHECK(s.address_note.find("no nvdisasm in this test") != std::string::npos);
}

TEST_CASE("the text rendering names exception, kernel, line, first thread and the address") {
  const auto text = render_site_text(site_of("use_after_free"));
  CHECK(text.find("Warp Illegal Address (code 14): 32 lanes in 1 warp, 1 block") != std::string::npos);
  CHECK(text.find("touch(float*, int) <<<(1,1,1), (64,1,1)>>>") != std::string::npos);
  CHECK(text.find("use_after_free.cu:5") != std::string::npos);
  CHECK(text.find("thread (0,0,0) of block (0,0,0)") != std::string::npos);
  CHECK(text.find("read 4 bytes at 0x7f24a6000000") != std::string::npos);
  const auto md = render_site_markdown(site_of("gather_bad_index"));
  CHECK(md.find("| address | not recoverable") != std::string::npos);
}

TEST_CASE("a site without line information says so instead of an empty line field") {
  FaultSite s = site_of("use_after_free");
  s.line.reset();
  s.line_note.clear();  // as read back from a report that carries no note
  const auto text = render_site_text(s);
  INFO(text);
  const std::string label = "  " + cudadiag::text::pad_right("line:", 12) + "  ";
  CHECK(text.find(label + "no line information\n") != std::string::npos);
  CHECK(text.find(":  \n") == std::string::npos);
  s.pc.reset();
  CHECK(render_site_text(s).find("no line information: the dump gives no PC") != std::string::npos);
  s.line_note = "no line information: build with -lineinfo";
  CHECK(render_site_text(s).find(label + "no line information: build with -lineinfo\n") != std::string::npos);
}

TEST_CASE("the text rendering of a site fits 80 columns") {
  for (const char* fixture :
       {"use_after_free", "far_write", "gather_bad_index", "misaligned16", "device_assert", "hang", "guard_write"}) {
    const auto text = render_site_text(site_of(fixture));
    INFO(text);
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t nl = text.find('\n', start);
      CHECK(cudadiag::text::display_width(text.substr(start, nl - start)) <= 80);
      start = nl + 1;
    }
  }
}

TEST_CASE("hang: a dump taken on request records no exception; the site is the spinning warp's line") {
  const auto s = site_of("hang");
  REQUIRE(s.unreadable.empty());
  CHECK_FALSE(s.has_exception);
  CHECK(s.kernel == "wait_flag(int volatile*)");
  CHECK(s.grid_dim == Dim3{1, 1, 1});
  CHECK(s.block_dim == Dim3{32, 1, 1});
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x7fa6d37ac240);  // "#0  0x00007fa6d37ac240 in wait_flag<<<(1,1,1),(32,1,1)>>>"
  REQUIRE(s.line);
  CHECK(ends_with(s.line->file, "hang.cu"));
  CHECK(s.line->line == 4);  // while (*flag == 0)
  CHECK(s.instruction == "ISETP.NE.AND P0, PT, R0, RZ, PT");
  CHECK_FALSE(s.address);
  // No exception, so no access faulted: the note says so rather than naming an empty exception.
  CHECK(s.address_note == "no exception was recorded, so no access faulted");
}

TEST_CASE("guard_write: a store onto a guard whose warp had exited: kernel, line and the store from the SM's error "
          "PC, as cuda-gdb read it; no thread, no address") {
  // tests/coredump/data/README.md, guard_write: the SM's row has exception 14 and a valid
  // error PC; the dump has no grid, no warp, no lane, and keeps the relocated images.
  // cuda-gdb: "The exception was triggered at PC 0x7f42df7ac2c0 fill_inclusive(float*,
  // int) (guard_write.cu:27)".
  const auto s = site_of("guard_write");
  REQUIRE(s.unreadable.empty());
  CHECK(s.device == "NVIDIA H100 80GB HBM3");
  CHECK(s.exception == "Warp Illegal Address");
  CHECK(s.exception_code == 14);
  CHECK(s.reported_by == ReportedBy::sm);
  CHECK(s.faulting_lanes == 0);
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x7f42df7ac2c0);
  CHECK(s.pc_basis == PcBasis::sm_error_pc);
  CHECK(s.kernel == "fill_inclusive(float*, int)");
  CHECK(s.kernel_mangled == "_Z14fill_inclusivePfi");
  CHECK(s.function == s.kernel);
  CHECK(s.function_offset == 0xc0);
  REQUIRE(s.line);
  CHECK(ends_with(s.line->file, "guard_write.cu"));
  CHECK(s.line->line == 27);  // if (i <= n) out[i] = static_cast<float>(i);
  CHECK_FALSE(s.grid_dim);
  // The store one element past the end (nvdisasm of the dump's relocated cubin).
  CHECK(s.instruction == "STG.E desc[UR4][R2.64], R7");
  CHECK(s.access == report::AccessKind::write);
  CHECK(s.space == report::MemorySpace::global);
  CHECK(s.access_bytes == 4);
  // The warp had exited: no thread, no registers, no address; said so.
  CHECK_FALSE(s.first);
  CHECK(s.threads.empty());
  CHECK_FALSE(s.address);
  CHECK(s.address_status == report::AddressStatus::not_attempted);
  CHECK_THAT(s.thread_note, Catch::StartsWith("not known: the faulting warp had left SM 126 before the dump"));
  REQUIRE_FALSE(s.notes.empty());
  CHECK_THAT(s.notes[0], Catch::StartsWith("SM 126 reports the exception, but no warp is left on it and no grid is "
                                           "running"));
  CHECK(headline(s) == "Warp Illegal Address in fill_inclusive(float*, int) at " + s.line->file + ":27");
  const auto text = render_site_text(s);
  INFO(text);
  CHECK(text.find("STG.E desc[UR4][R2.64], R7") != std::string::npos);
  CHECK(text.find("a 4-byte store, address not given") != std::string::npos);

  // Without nvdisasm: kernel and line still, from the cubin's symbols and line table.
  const auto bare = site_of("guard_write", /*with_listing=*/false);
  CHECK(bare.kernel == "fill_inclusive(float*, int)");
  REQUIRE(bare.line);
  CHECK(bare.line->line == 27);
  CHECK(bare.instruction.empty());
  CHECK(bare.address_note == "no disassembler: no nvdisasm in this test");
}

TEST_CASE("guard_store: a store onto a fence guard after its kernel finished, its images emptied: the SM's error PC "
          "and nothing more") {
  // tests/programs/oob_write.cu under the fence rung with dumps armed (H100, driver
  // 580.159.04): its one store past the end hit the guard page after the warp had issued it
  // and the grid had ended; the dump holds the SM's exception and error PC, no grid, no
  // warp. Slimmed (every relocated image emptied): the error PC lies in no image left, so
  // the site names the PC and says that it can name nothing else.
  const auto s = read_fault_site(coredump_data("slim/guard_store.nvcudmp"), DisassembleFn{}, "no nvdisasm in this test");
  REQUIRE(s.unreadable.empty());
  CHECK(s.exception == "Warp Illegal Address");
  CHECK(s.reported_by == ReportedBy::sm);
  CHECK(s.faulting_lanes == 0);
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x7f2edf7aeaf0);
  CHECK(s.pc_basis == PcBasis::sm_error_pc);
  CHECK(s.kernel.empty());
  CHECK_FALSE(s.line);
  CHECK_FALSE(s.address);
  CHECK(s.threads.empty());
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::StartsWith("SM 130 reports the exception at error PC 0x7f2edf7aeaf0, but no warp is "
                                           "left on it and no grid is running: the faulting warp had moved on"));
  CHECK_THAT(s.notes[0], Catch::EndsWith("so the dump cannot name the kernel, line, thread or address"));
}

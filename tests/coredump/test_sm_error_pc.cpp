// A store faults after its warp issued it: when the warp (and its grid) have finished by
// the time of the dump, only the SM's row says anything: its exception and, since driver
// r555, its error PC. These cases take a real dump (far_write: an H100's, with the
// kernel's relocated image) and leave in the model only what such a dump holds: the SM's
// row, no grid, no warp, no lane. The PC is the one cuda-gdb printed for far_write
// ("The exception was triggered at PC 0x7faa237ac2a0 far_write(float*, long long)
// (far_write.cu:6)"). The real dump of such a store is tested in test_fault_site.cpp.
#include <catch2/catch.hpp>

#include <algorithm>

#include "coredump/core_dump.h"
#include "coredump/dump_file.h"
#include "coredump/fault_site.h"
#include "coredump/fault_site_json.h"
#include "coredump/render_site.h"
#include "fixtures.h"
#include "report/fault_site.h"
#include "coredump/report_site.h"

using namespace cudadiag;
using namespace cudadiag::coredump;
using cudadiag::test::coredump_data;
using cudadiag::test::stored_listing;

namespace {

constexpr std::uint64_t kStorePc = 0x7faa237ac2a0;        // STG.E in far_write, line 6
constexpr std::uint64_t kDeviceFunctionPc = 0x7faa23000010;  // in membar_war2_bug3615082: no entry

// far_write's dump as a dump of an exited warp holds it: the SM's row with the exception
// and `error_pc`, nothing below it.
struct ExitedWarpDump {
  DumpFile file{coredump_data("far_write.nvcudmp")};
  CoreDump dump = read_core_dump(file.bytes());

  explicit ExitedWarpDump(std::optional<std::uint64_t> error_pc) {
    dump.grids.clear();
    dump.ctas.clear();
    dump.warps.clear();
    dump.lanes.clear();
    for (auto& sm : dump.sms) {
      sm.exception = 0;
      sm.error_pc.reset();
      if (sm.sm_id == 124) {
        sm.exception = 14;
        sm.error_pc = error_pc;
      }
    }
  }
};

}  // namespace

TEST_CASE("SM error PC, no warp left: kernel, line and the store's width, the thread and address not known") {
  const ExitedWarpDump d(kStorePc);
  const auto s = analyze_dump(d.dump, stored_listing("far_write"), "none");
  CHECK(s.exception == "Warp Illegal Address");
  CHECK(s.reported_by == ReportedBy::sm);
  REQUIRE(s.pc);
  CHECK(*s.pc == kStorePc);
  CHECK(s.pc_basis == PcBasis::sm_error_pc);
  CHECK(s.kernel == "far_write(float*, long long)");
  CHECK(s.kernel_mangled == "_Z9far_writePfx");
  CHECK(s.function == s.kernel);
  CHECK(s.function_offset == 0xa0);
  REQUIRE(s.line);
  CHECK(s.line->line == 6);
  CHECK_FALSE(s.grid_dim);  // no grid: no launch shape
  CHECK(s.instruction == "STG.E desc[UR4][R2.64], R5");
  CHECK(s.access == report::AccessKind::write);
  CHECK(s.access_bytes == 4);
  CHECK(s.address_status == report::AddressStatus::not_attempted);
  CHECK_FALSE(s.address);
  CHECK_FALSE(s.first);
  CHECK(s.threads.empty());
  CHECK_THAT(s.thread_note, Catch::StartsWith("not known: the faulting warp had left SM 124 before the dump"));
  REQUIRE_FALSE(s.notes.empty());
  CHECK_THAT(s.notes[0], Catch::StartsWith("SM 124 reports the exception, but no warp is left on it and no grid is "
                                           "running"));
  CHECK(headline(s).find("far_write(float*, long long) at ") != std::string::npos);

  // What a reader sees: the kernel, the line, the store, and why there is no thread.
  const auto text = render_site_text(s);
  INFO(text);
  CHECK(text.find("kernel:") != std::string::npos);
  CHECK(text.find("far_write.cu:6") != std::string::npos);
  CHECK(text.find("STG.E desc[UR4][R2.64], R5") != std::string::npos);
  const auto thread_row = text.find("  thread:");
  REQUIRE(thread_row != std::string::npos);
  CHECK(text.substr(thread_row, text.find('\n', thread_row) - thread_row)
            .find("not known: the faulting warp had left SM 124") != std::string::npos);
  CHECK(describe_access(s).rfind("a 4-byte store, address not given: the faulting warp had exited", 0) == 0);
  const auto md = render_site_markdown(s);
  CHECK(md.find("| thread | not known: the faulting warp had left SM 124") != std::string::npos);

  // The report's one line names kernel, line and the store, and says the thread is not known.
  const auto r = to_report_site(s);
  CHECK(r.thread_note == s.thread_note);
  const auto line = report::site_line(r);
  CHECK_THAT(line, Catch::StartsWith("Warp Illegal Address in far_write(float*, long long) at "));
  CHECK_THAT(line, Catch::Contains("far_write.cu:6: a 4-byte store, thread not known: the faulting warp had left"));

  // JSON both ways.
  const auto j = to_json(s);
  CHECK(j["pc"]["basis"] == "sm_error_pc");
  CHECK(j["kernel"]["name"] == "far_write(float*, long long)");
  CHECK(j["access"]["kind"] == "write");
  CHECK(j["access"]["bytes"] == 4);
  CHECK(j["access"]["status"] == "not_attempted");
  CHECK(j["thread_note"] == s.thread_note);
  CHECK_FALSE(j.contains("first"));
  CHECK(to_json(fault_site_from_json(j, "t")) == j);
  const auto rj = report::to_json(r);
  CHECK(rj["thread_note"] == s.thread_note);
  CHECK(rj["access"]["kind"] == "write");
}

TEST_CASE("SM error PC without a disassembler: kernel and line from the cubin, no instruction, and why") {
  const ExitedWarpDump d(kStorePc);
  const auto s = analyze_dump(d.dump, DisassembleFn{}, "nvdisasm not found");
  CHECK(s.kernel == "far_write(float*, long long)");
  REQUIRE(s.line);
  CHECK(s.line->line == 6);
  CHECK(s.instruction.empty());
  CHECK(s.access == report::AccessKind::none);
  CHECK(s.address_note == "no disassembler: nvdisasm not found");
  CHECK_FALSE(s.thread_note.empty());
  CHECK(report::site_line(to_report_site(s)).find(": a ") == std::string::npos);  // no width claimed
}

TEST_CASE("SM error PC in a device function: the function and line, no kernel claimed") {
  const ExitedWarpDump d(kDeviceFunctionPc);
  const auto s = analyze_dump(d.dump, DisassembleFn{}, "none");
  CHECK(s.function == "membar_war2_bug3615082");
  CHECK(s.kernel.empty());
  CHECK(s.kernel_mangled.empty());
  CHECK(std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& n) {
    return n.find("which is no kernel's entry") != std::string::npos;
  }));
  CHECK(headline(s).find("in the device function membar_war2_bug3615082") != std::string::npos);
  CHECK(report::site_line(to_report_site(s)).find("in the device function membar_war2_bug3615082") !=
        std::string::npos);
}

TEST_CASE("SM error PC in no image: the PC is given, and that nothing else can be named") {
  const ExitedWarpDump d(0x1000);
  const auto s = analyze_dump(d.dump, stored_listing("far_write"), "none");
  REQUIRE(s.pc);
  CHECK(*s.pc == 0x1000);
  CHECK(s.kernel.empty());
  CHECK(s.function.empty());
  CHECK_FALSE(s.line);
  CHECK(s.instruction.empty());
  CHECK_FALSE(s.address_status);  // never looked at
  CHECK(s.thread_note.empty());
  CHECK(s.line_note == "the SM's error PC is in no function of the dump's relocated images");
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::StartsWith("SM 124 reports the exception at error PC 0x1000, but no warp is left"));
  CHECK_THAT(s.notes[0], Catch::EndsWith("so the dump cannot name the kernel, line, thread or address"));
}

TEST_CASE("no valid SM error PC, no warp: the exception only, as before") {
  const ExitedWarpDump d(std::nullopt);
  const auto s = analyze_dump(d.dump, stored_listing("far_write"), "none");
  CHECK(s.exception == "Warp Illegal Address");
  CHECK_FALSE(s.pc);
  CHECK(s.kernel.empty());
  CHECK(s.thread_note.empty());
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::EndsWith("so the dump cannot name the kernel, line, thread or address"));
}
